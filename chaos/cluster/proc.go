package cluster

import (
	"os/exec"
	"time"

	"samsa/childproc"
)

// Proc is one restartable child process (ZooKeeper server or broker), in
// its own process group so --cleanup can find it.
type Proc = childproc.Proc

// killWait bounds the wait for a SIGKILLed process to exit.
const killWait = 30 * time.Second

func newProc(name, logPath string, newCmd func() *exec.Cmd) *Proc {
	return &Proc{Name: name, LogPath: logPath, Banner: "samsa-chaos", NewCmd: newCmd, Setpgid: true}
}
