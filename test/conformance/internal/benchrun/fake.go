package benchrun

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
	"github.com/rmqpush/rmqpush/test/fakebroker/control"
)

// fakeProcess is the standalone fake cluster (test/fakebroker/cmd/fakebroker), one
// broker, run as a child process.
type fakeProcess struct {
	cmd      *exec.Cmd
	nameSrv  string
	broker   string          // broker-a's address
	control  *control.Client // its control endpoint
	exited   chan error
	stderrTo io.Writer
}

// startFake starts the fake cluster and waits for it to print its addresses and "ready".
func startFake(ctx context.Context, bin string, serviceTime time.Duration, rocketMQ5 bool, log io.Writer) (*fakeProcess, error) {
	args := []string{"-namesrv", "127.0.0.1:0", "-brokers", "1", "-control", "127.0.0.1:0"}
	if rocketMQ5 {
		args = append(args, "-rocketmq5")
	}
	if serviceTime > 0 {
		args = append(args, "-pull-service-time", serviceTime.String())
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = prefixWriter(log, "fakebroker: ")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("benchrun: start %s: %w", bin, err)
	}
	f := &fakeProcess{cmd: cmd, exited: make(chan error, 1)}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "name server "):
				f.nameSrv = strings.TrimPrefix(line, "name server ")
			case strings.HasPrefix(line, "broker broker-a "):
				f.broker = strings.TrimPrefix(line, "broker broker-a ")
			case strings.HasPrefix(line, "control "):
				f.control = control.NewClient(strings.TrimPrefix(line, "control "))
			case line == "ready" && !signalled:
				signalled = true
				ready <- nil
			}
		}
		if !signalled {
			ready <- fmt.Errorf("benchrun: %s ended before it was ready", bin)
		}
		f.exited <- cmd.Wait()
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		f.stop()
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		f.stop()
		return nil, fmt.Errorf("benchrun: %s not ready after 30s", bin)
	}
	if f.nameSrv == "" || f.broker == "" || f.control == nil {
		f.stop()
		return nil, fmt.Errorf("benchrun: %s did not print its name server and broker addresses", bin)
	}
	return f, nil
}

// requests returns the requests the fake cluster received so far, by request code,
// name server and broker together.
func (f *fakeProcess) requests(ctx context.Context) (map[int32]int, error) {
	byServer, err := f.control.Requests(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int32]int{}
	for _, counts := range byServer {
		for code, n := range counts {
			out[code] += n
		}
	}
	return out, nil
}

// cpu returns the fake process's CPU time so far.
func (f *fakeProcess) cpu() time.Duration {
	d, err := benchkit.ProcessCPU(f.cmd.Process.Pid)
	if err != nil {
		return 0
	}
	return d
}

// stop interrupts the fake and waits for it (killing it after 10 s).
func (f *fakeProcess) stop() {
	if f.control != nil {
		f.control.Close()
	}
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-f.exited:
	case <-time.After(10 * time.Second):
		_ = f.cmd.Process.Kill()
		<-f.exited
	}
}

// prefixWriter returns a writer that writes each whole line it gets to w with prefix
// (exec.Cmd copies a child's output into it on a goroutine that Wait waits for).
func prefixWriter(w io.Writer, prefix string) io.Writer {
	return &lineWriter{w: w, prefix: prefix}
}

type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 { // a runaway line: flush it
		fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf)
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

// burner is the busy-core process (cmd/benchburn).
type burner struct {
	cmd    *exec.Cmd
	exited chan error
}

// startBurner starts a process that keeps one core busy until stop.
func startBurner(bin string) (*burner, error) {
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("benchrun: start %s: %w", bin, err)
	}
	b := &burner{cmd: cmd, exited: make(chan error, 1)}
	go func() { b.exited <- cmd.Wait() }()
	return b, nil
}

func (b *burner) stop() {
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
}
