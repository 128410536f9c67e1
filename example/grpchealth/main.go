// Command grpchealth serves gRPC's health service on loopback and calls its
// Check method -n times, each call carrying the W3C traceparent of a
// caller's span in its metadata. The otlp module's tests instrument it
// with meterinject -otlp, which marks Check as a root (a method of a
// service the package registers), and read what a loopback receiver gets.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// Traceparent is the caller's span context that every call carries.
const Traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

type checker struct {
	grpc_health_v1.UnimplementedHealthServer
}

// Check answers SERVING for every service, after a little work.
func (c *checker) Check(ctx context.Context, req *grpc_health_v1.HealthCheckRequest) (*grpc_health_v1.HealthCheckResponse, error) {
	if weigh(req.GetService()) < 0 {
		return nil, fmt.Errorf("unreachable")
	}
	return &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING}, nil
}

// weigh is Check's timed child.
//
//go:noinline
func weigh(s string) int {
	n := 0
	for i := 0; i < 2000; i++ {
		n += len(s) + i%7
	}
	return n
}

func main() {
	n := flag.Int("n", 20, "calls")
	flag.Parse()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	grpc_health_v1.RegisterHealthServer(srv, &checker{})
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := grpc_health_v1.NewHealthClient(conn)
	for i := 0; i < *n; i++ {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", Traceparent)
		if _, err := client.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: "grpcprog"}); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(*n, "calls")
}
