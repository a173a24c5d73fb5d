package reliability

import "syscall"

// procAttr makes a child die with the orchestrator (Linux's parent-death signal), so an
// interrupted run leaves no fake cluster or consumer behind.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
