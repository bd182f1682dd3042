//go:build js && wasm

// The WebAssembly entry point (helm.wasm): globalThis.binnacleHelm.render(requestJSON) and
// .inspect(requestJSON) answer a Promise of a response JSON; `lookup` calls
// globalThis.binnacleHelmHost.request (src/helm-engine/engine-worker.ts).
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"syscall/js"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("render", js.FuncOf(func(_ js.Value, args []js.Value) any { return promise(func() string { return handle(args, render) }) }))
	api.Set("inspect", js.FuncOf(func(_ js.Value, args []js.Value) any { return promise(func() string { return handle(args, inspect) }) }))
	js.Global().Set("binnacleHelm", api)
	if ready := js.Global().Get("binnacleHelmReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

// promise runs work in a goroutine (so it may wait on host callbacks) and answers a JS Promise.
func promise(work func() string) js.Value {
	return js.Global().Get("Promise").New(js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve := args[0]
		go func() {
			defer func() {
				if r := recover(); r != nil {
					b, _ := json.Marshal(response{Error: fmt.Sprintf("helm engine panic: %v", r), Phase: "internal"})
					resolve.Invoke(string(b))
				}
			}()
			resolve.Invoke(work())
		}()
		return nil
	}))
}

func handle(args []js.Value, fn func(request) response) string {
	if len(args) < 1 {
		b, _ := json.Marshal(response{Error: "render needs a request", Phase: "request"})
		return string(b)
	}
	return string(handleJSON([]byte(args[0].String()), fn))
}

// hostTransport hands each request to globalThis.binnacleHelmHost.request(method, url,
// body) → Promise<{status, body}>, which the host answers with its own Kubernetes client.
type hostTransport struct{}

func (hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := requestBody(r)
	if err != nil {
		return nil, err
	}
	host := js.Global().Get("binnacleHelmHost")
	if host.Type() != js.TypeObject {
		return nil, fmt.Errorf("lookup: no host bridge")
	}
	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	var onOK, onErr js.Func
	onOK = js.FuncOf(func(_ js.Value, args []js.Value) any {
		v := args[0]
		done <- result{status: v.Get("status").Int(), body: v.Get("body").String()}
		return nil
	})
	onErr = js.FuncOf(func(_ js.Value, args []js.Value) any {
		done <- result{err: fmt.Errorf("lookup: %s", args[0].Call("toString").String())}
		return nil
	})
	defer onOK.Release()
	defer onErr.Release()
	host.Call("request", r.Method, r.URL.Host, r.URL.RequestURI(), body).Call("then", onOK, onErr)
	res := <-done
	if res.err != nil {
		return nil, res.err
	}
	return hostResponse(r, res.status, res.body), nil
}
