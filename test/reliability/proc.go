package reliability

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// sigterm asks a process to stop cleanly.
const sigterm = syscall.SIGTERM

// proc is a child process whose stdout and stderr go to files (so no goroutine copies
// them). One goroutine waits for it to exit; it ends with the process, which every
// scenario kills or stops before it returns. It is not safe for concurrent use.
type proc struct {
	name       string
	cmd        *exec.Cmd
	stdoutPath string
	stderrPath string
	started    time.Time
	done       chan struct{} // closed when the process has exited and been reaped
	exitErr    error         // set before done is closed
}

// startProc starts bin with args; its output goes to <dir>/<name>.stdout and .stderr.
func startProc(dir, name, bin string, args ...string) (*proc, error) {
	p := &proc{name: name, stdoutPath: dir + "/" + name + ".stdout", stderrPath: dir + "/" + name + ".stderr"}
	stdout, err := os.Create(p.stdoutPath)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.Create(p.stderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = stdout, stderr
	p.cmd.SysProcAttr = procAttr()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("reliability: starting %s: %w", name, err)
	}
	p.started = time.Now()
	p.done = make(chan struct{})
	go func() {
		p.exitErr = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// signal sends sig; a process that already exited is not an error.
func (p *proc) signal(sig syscall.Signal) error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("reliability: %s (pid %d): %v: %w", p.name, p.pid(), sig, err)
	}
	return nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	_ = p.wait(time.Minute) // the exit status of a killed process is "killed"
	return nil
}

// term sends SIGTERM and waits up to timeout for the process to exit; then it kills it
// and returns an error.
func (p *proc) term(timeout time.Duration) error {
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	if err := p.wait(timeout); err != nil {
		return fmt.Errorf("reliability: %s (pid %d) after SIGTERM: %w", p.name, p.pid(), err)
	}
	return nil
}

// wait waits up to timeout for the process to exit and returns its exit error. A
// process still running then is killed.
func (p *proc) wait(timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("still running %v later; killed%s", timeout, p.stderrTail())
	}
	if p.exitErr != nil {
		return fmt.Errorf("%w%s", p.exitErr, p.stderrTail())
	}
	return nil
}

// running reports whether the process has not exited yet.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stderrTail returns the end of the process's stderr, for error messages.
func (p *proc) stderrTail() string {
	data, err := os.ReadFile(p.stderrPath)
	if err != nil || len(data) == 0 {
		return ""
	}
	const keep = 2000
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return "; stderr: " + strings.TrimSpace(string(data))
}

// waitForLine polls the process's stdout until a line for which match returns true
// appears, the process exits, or timeout passes. It returns the lines read.
func (p *proc) waitForLine(timeout time.Duration, what string, match func(string) bool) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(p.stdoutPath)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(data), "\n")
		lines = lines[:len(lines)-1] // the last one may be unfinished
		for _, l := range lines {
			if match(l) {
				return lines, nil
			}
		}
		if !p.running() {
			return nil, fmt.Errorf("reliability: %s exited before %s: %v%s", p.name, what, p.exitErr, p.stderrTail())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("reliability: %s: no %s within %v%s", p.name, what, timeout, p.stderrTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
