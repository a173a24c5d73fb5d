package remoting_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rmqpush/rmqpush/remoting"
)

// A Server answering one request code, and a Client calling it synchronously and
// asynchronously.
func Example() {
	const queryOffset = 14
	srv, err := remoting.NewServer(remoting.WithServerHandler(queryOffset,
		func(sc *remoting.ServerConn, req *remoting.Command) *remoting.Command {
			resp := remoting.NewResponse(req, 0, "")
			resp.ExtFields = remoting.Fields{{Key: "offset", Value: "42"}}
			return resp
		}))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		panic(err)
	}

	cl, err := remoting.NewClient(remoting.WithSerialization(remoting.SerializeRocketMQ))
	if err != nil {
		panic(err)
	}
	defer cl.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req := remoting.NewRequest(queryOffset, remoting.Fields{{Key: "topic", Value: "orders"}}, nil)
	resp, err := cl.Invoke(ctx, srv.Addr(), req)
	if err != nil {
		panic(err)
	}
	fmt.Println("sync:", resp.Code, resp.ExtFields.Value("offset"))

	done := make(chan string, 1)
	err = cl.InvokeAsync(srv.Addr(), remoting.NewRequest(queryOffset, nil, nil), 3*time.Second,
		func(resp *remoting.Command, err error) {
			if err != nil {
				done <- err.Error()
				return
			}
			done <- resp.ExtFields.Value("offset")
		})
	if err != nil {
		panic(err)
	}
	fmt.Println("async:", <-done)
	// Output:
	// sync: 0 42
	// async: 42
}
