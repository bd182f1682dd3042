//go:build !js

// The native entry point (helm-engine): a child process of Binnacle (src/helm-engine/engine-process.ts)
// speaking newline-delimited JSON (encoding/json never writes a raw newline) on stdin/stdout:
//
//	→ {"id":N,"op":"render"|"inspect","request":{...}}
//	← {"id":N,"memoryBytes":M,"response":{...}}   or {"id":N,"memoryBytes":M,"oversized":BYTES}
//	← {"id":N,"host":{"seq":S,"method":"GET","path":"/api/v1/...","body":""}}   (a `lookup` of call N)
//	→ {"hostReply":S,"status":200,"body":"..."}
//
// Calls run in goroutines, so a render waiting on a lookup does not stop this loop reading the
// reply; Binnacle sends one call at a time to a process all the same (a pool of processes for
// more), so that a process killed for a call's bounds (time, memory) takes down that call alone.
// `lookup` never reaches the network from here: the host answers it with the client and the
// read-only gate of the render that asked (src/helm-engine/lookup-gate.ts), as for WebAssembly.
// stdin closing ends the process once the calls under way are answered.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

type inFrame struct {
	ID        int             `json:"id"`
	Op        string          `json:"op"`
	Request   json.RawMessage `json:"request"`
	HostReply int64           `json:"hostReply"`
	Status    int             `json:"status"`
	Body      string          `json:"body"`
}

type hostRequest struct {
	Seq    int64  `json:"seq"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   string `json:"body"`
}

type hostAnswer struct {
	status int
	body   string
}

var (
	outMu     sync.Mutex
	maxOutput int
	hostSeq   atomic.Int64
	hostMu    sync.Mutex
	waiting   = map[int64]chan hostAnswer{}
	inFlight  sync.WaitGroup
)

func main() {
	memoryLimit := flag.Int64("memory-limit", 0, "bytes of memory this process may map; past it Go dies \"out of memory\" (0: no limit)")
	flag.IntVar(&maxOutput, "max-output", 0, "the most bytes one response may be; a longer one is answered as oversized (0: no limit)")
	flag.Parse()
	if *memoryLimit > 0 {
		// The collector works harder as the heap nears the limit, so a render that only makes
		// garbage fits; the rest is for stacks, the runtime's own data and fragmentation.
		debug.SetMemoryLimit(*memoryLimit * 3 / 4)
		// RLIMIT_DATA counts memory mapped for writing, not memory used, and Go maps its heap
		// one 64 MiB arena at a time (the process starts with one, ~77 MiB in all): the
		// ceiling is the limit plus one arena, so a limit of 64 MiB still starts.
		if err := limitData(uint64(*memoryLimit) + 64<<20); err != nil {
			fmt.Fprintf(os.Stderr, "helm-engine: cannot set the memory limit: %v\n", err)
			os.Exit(2)
		}
	}
	in := bufio.NewReaderSize(os.Stdin, 64*1024)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			dispatch(line)
		}
		if err != nil {
			inFlight.Wait() // stdin closed: the calls already sent are answered, then the process ends
			os.Exit(0)
		}
	}
}

func dispatch(line []byte) {
	var f inFrame
	if err := json.Unmarshal(line, &f); err != nil {
		fmt.Fprintf(os.Stderr, "helm-engine: a frame that is not JSON: %v\n", err)
		return
	}
	if f.HostReply != 0 {
		hostMu.Lock()
		ch := waiting[f.HostReply]
		delete(waiting, f.HostReply)
		hostMu.Unlock()
		if ch != nil {
			ch <- hostAnswer{status: f.Status, body: f.Body}
		}
		return
	}
	fn := render
	if f.Op == "inspect" {
		fn = inspect
	} else if f.Op != "render" {
		b, _ := json.Marshal(response{Error: fmt.Sprintf("unknown op %q", f.Op), Phase: "request"})
		answer(f.ID, b)
		return
	}
	inFlight.Add(1)
	go func() {
		defer inFlight.Done()
		answer(f.ID, handleJSON(f.Request, fn))
	}()
}

// answer writes a call's response, or only its size when it is over --max-output, so an
// oversized render is never copied into the host's heap.
func answer(id int, res []byte) {
	held := highWater()
	if maxOutput > 0 && len(res) > maxOutput {
		write([]byte(fmt.Sprintf(`{"id":%d,"memoryBytes":%d,"oversized":%d}`, id, held, len(res))))
		return
	}
	frame := make([]byte, 0, len(res)+64)
	frame = fmt.Appendf(frame, `{"id":%d,"memoryBytes":%d,"response":`, id, held)
	frame = append(frame, res...)
	write(append(frame, '}'))
}

func write(frame []byte) {
	outMu.Lock()
	defer outMu.Unlock()
	if _, err := os.Stdout.Write(append(frame, '\n')); err != nil {
		os.Exit(0) // the host is gone
	}
}

// hostTransport hands each request to the host as a `host` frame of the call it belongs to
// (the host name is `call-N`) and waits for the host's reply.
type hostTransport struct{}

func (hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := requestBody(r)
	if err != nil {
		return nil, err
	}
	id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Host, "call-"))
	if err != nil {
		return nil, fmt.Errorf("lookup: no call for host %q", r.URL.Host)
	}
	seq := hostSeq.Add(1)
	ch := make(chan hostAnswer, 1)
	hostMu.Lock()
	waiting[seq] = ch
	hostMu.Unlock()
	frame, err := json.Marshal(struct {
		ID   int         `json:"id"`
		Host hostRequest `json:"host"`
	}{id, hostRequest{Seq: seq, Method: r.Method, Path: r.URL.RequestURI(), Body: body}})
	if err != nil {
		return nil, err
	}
	write(frame)
	select {
	case a := <-ch:
		return hostResponse(r, a.status, a.body), nil
	case <-r.Context().Done():
		hostMu.Lock()
		delete(waiting, seq)
		hostMu.Unlock()
		return nil, r.Context().Err()
	}
}

// highWater is the most memory this process has held (VmHWM): like a WebAssembly instance's
// linear memory, it never goes down while the process lives, and the host drops a process whose
// peak went past its recycle bound. Without /proc, what Go holds from the system now.
func highWater() uint64 {
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				if kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Sys - m.HeapReleased
}
