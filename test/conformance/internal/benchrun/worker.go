package benchrun

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rmqpush/rmqpush/test/conformance/internal/benchkit"
)

// runWorker runs one worker program with args, and env added to this process's
// environment; onLine gets every line it prints before its result (ready, window-start,
// window-end). It returns the worker's result.
func runWorker(ctx context.Context, bin string, args, env []string, timeout time.Duration, log io.Writer,
	onLine func(string)) (benchkit.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = prefixWriter(log, "  "+binName(bin)+": ")
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return benchkit.Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return benchkit.Result{}, fmt.Errorf("benchrun: start %s: %w", bin, err)
	}
	var (
		res    benchkit.Result
		got    bool
		perr   error
		others []string
	)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		r, ok, err := benchkit.ParseResult(line)
		switch {
		case err != nil:
			perr = err
		case ok:
			res, got = r, true
		default:
			if onLine != nil {
				onLine(line)
			}
			others = append(others, line)
		}
	}
	werr := cmd.Wait()
	switch {
	case perr != nil:
		return res, perr
	case !got:
		return res, fmt.Errorf("benchrun: %s %s printed no result (exit: %v; output: %q)", bin, strings.Join(args, " "), werr, others)
	case res.Error != "":
		return res, fmt.Errorf("benchrun: %s: %s", binName(bin), res.Error)
	case werr != nil:
		return res, fmt.Errorf("benchrun: %s: %w", binName(bin), werr)
	}
	return res, nil
}

func binName(bin string) string {
	if i := strings.LastIndexAny(bin, `/\`); i >= 0 {
		return bin[i+1:]
	}
	return bin
}

// workerArgs returns a worker's arguments with those every worker gets.
func (r *runner) workerArgs(args []string) []string {
	if r.cfg.AppHeapMiB > 0 {
		args = append(args, "-app-heap", strconv.Itoa(r.cfg.AppHeapMiB))
	}
	return args
}

// workerEnv is what every worker's environment adds to this process's.
func (r *runner) workerEnv() []string {
	if r.cfg.WorkerGOMAXPROCS > 0 {
		return []string{"GOMAXPROCS=" + strconv.Itoa(r.cfg.WorkerGOMAXPROCS)}
	}
	return nil
}
