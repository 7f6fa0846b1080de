package patches

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"time"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Limits bound one evaluation of an expression.
type Limits struct {
	// Timeout is the longest an evaluation may run; it is stopped then.
	Timeout time.Duration
	// MaxBytes bounds memory, in bytes: the size of one string or list a
	// builtin would make in one step (String.prototype.repeat, padStart,
	// padEnd, Array(n)), the bytes the process allocates while the
	// evaluation runs (sampled every millisecond), and the size of the
	// result as JSON.
	MaxBytes int64
}

// DefaultLimits returns the limits the syncer uses: 100 ms and 64 MiB. An
// expression of a patch reads and returns one field's value, which takes
// microseconds and a few kilobytes; these limits stop a runaway loop or
// allocation long before it slows the syncer, with room for the
// allocations of the syncer's other goroutines (see watch).
func DefaultLimits() Limits { return Limits{Timeout: 100 * time.Millisecond, MaxBytes: 64 << 20} }

// ErrLimit is wrapped by the error of an evaluation stopped by Limits.
var ErrLimit = errors.New("limit exceeded")

// Expression is a compiled JavaScript expression of a patch. `value` is
// the field's value (a JSON value: string, number, boolean, null, list or
// object); the expression's result is the new value.
type Expression struct {
	src         string
	prog, guard *goja.Program
}

// CompileExpression compiles src, a JavaScript expression (ECMAScript 5.1
// with most of ES6, as github.com/dop251/goja runs it) over `value`, e.g.
// `"prefix-" + value` or `value.replace(/^prefix-/, "")`. It returns the
// syntax error, with its position, when src does not parse.
func CompileExpression(src string) (*Expression, error) {
	// A function body, so that `value` is a parameter rather than a global,
	// and a return statement cannot be smuggled in; the line break keeps a
	// trailing // comment in src from eating the closing parenthesis.
	prog, err := goja.Compile("expression", "(function (value) { return (\n"+src+"\n); })", true)
	if err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	guard, err := goja.Compile("guard", guardSource, true)
	if err != nil {
		return nil, fmt.Errorf("allocation guard: %w", err)
	}
	return &Expression{src: src, prog: prog, guard: guard}, nil
}

// String returns the expression's source.
func (e *Expression) String() string { return e.src }

// Eval runs the expression on value (a JSON value; it is not modified) in a
// fresh JavaScript runtime, so that no state passes from one evaluation to
// the next. The result is converted to a JSON value as
// k8s.io/apimachinery's unstructured objects hold them (integers int64);
// undefined becomes nil. It returns an error for a JavaScript exception, a
// result that is not JSON (a function, a cycle), or an evaluation stopped
// by lim (wrapping ErrLimit).
func (e *Expression) Eval(value any, lim Limits) (any, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(256)
	if err := guardAllocations(vm, e.guard, lim.MaxBytes); err != nil {
		return nil, err
	}
	fn, err := vm.RunProgram(e.prog)
	if err != nil {
		return nil, err
	}
	call, ok := goja.AssertFunction(fn)
	if !ok {
		return nil, errors.New("expression did not compile to a function")
	}
	arg := vm.ToValue(runtime.DeepCopyJSONValue(normalize(value)))

	done := make(chan struct{})
	defer close(done)
	go watch(vm, lim, done)
	out, err := call(goja.Undefined(), arg)
	if err != nil {
		var interrupted *goja.InterruptedError
		if errors.As(err, &interrupted) {
			if cause, ok := interrupted.Value().(error); ok {
				return nil, cause
			}
		}
		var exc *goja.Exception
		if errors.As(err, &exc) {
			return nil, errors.New(exc.Value().String())
		}
		return nil, err
	}
	return exportJSON(vm, out, lim.MaxBytes)
}

// watch interrupts vm when it runs longer than lim.Timeout or when the
// process allocates more than lim.MaxBytes meanwhile, until done closes.
// The allocation count is the whole process's (Go has no per-goroutine
// one), so other goroutines' allocations count too; MaxBytes is set well
// above what the syncer allocates in lim.Timeout.
func watch(vm *goja.Runtime, lim Limits, done <-chan struct{}) {
	timeout := time.NewTimer(lim.Timeout)
	defer timeout.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	start := sample[0].Value.Uint64()
	for {
		select {
		case <-done:
			return
		case <-timeout.C:
			vm.Interrupt(fmt.Errorf("%w: ran longer than %s", ErrLimit, lim.Timeout))
			return
		case <-tick.C:
			metrics.Read(sample)
			if n := sample[0].Value.Uint64() - start; lim.MaxBytes > 0 && n > uint64(lim.MaxBytes) {
				vm.Interrupt(fmt.Errorf("%w: allocated more than %d bytes", ErrLimit, lim.MaxBytes))
				return
			}
		}
	}
}

// guardSource is a function of max that replaces the builtins which
// allocate, in one step the watchdog cannot interrupt, a string or list
// whose size an argument sets, by versions that refuse a result larger
// than max bytes (github.com/dop251/goja has no memory limit of its own:
// https://github.com/dop251/goja/issues/645).
const guardSource = `(function (max) {
  var S = String.prototype, repeat = S.repeat, padStart = S.padStart, padEnd = S.padEnd, A = Array;
  function fail() { throw new RangeError("memory limit exceeded: a result over " + max + " bytes"); }
  S.repeat = function (n) { if (String(this).length * Number(n) > max) fail(); return repeat.call(this, n); };
  S.padStart = function (n, f) { if (Number(n) > max) fail(); return padStart.call(this, n, f); };
  S.padEnd = function (n, f) { if (Number(n) > max) fail(); return padEnd.call(this, n, f); };
  Array = function () {
    if (arguments.length === 1 && typeof arguments[0] === "number" && arguments[0] * 8 > max) fail();
    return A.apply(this, arguments);
  };
  Array.prototype = A.prototype; Array.isArray = A.isArray; Array.from = A.from; Array.of = A.of;
})`

// guardAllocations runs guard (guardSource compiled) in vm with max.
func guardAllocations(vm *goja.Runtime, guard *goja.Program, max int64) error {
	if max <= 0 {
		return nil
	}
	fn, err := vm.RunProgram(guard)
	if err != nil {
		return err
	}
	call, ok := goja.AssertFunction(fn)
	if !ok {
		return errors.New("allocation guard did not compile to a function")
	}
	_, err = call(goja.Undefined(), vm.ToValue(max))
	return err
}

// exportJSON converts a JavaScript result to a JSON value.
func exportJSON(vm *goja.Runtime, v goja.Value, max int64) (any, error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	if _, ok := goja.AssertFunction(v); ok {
		return nil, errors.New("the result is a function, not a JSON value")
	}
	data, err := json.Marshal(v.Export())
	if err != nil {
		return nil, fmt.Errorf("the result is not a JSON value: %w", err)
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("%w: the result is %d bytes of JSON, more than %d", ErrLimit, len(data), max)
	}
	var out any
	if err := utiljson.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// normalize turns the numbers of a JSON value into what
// runtime.DeepCopyJSONValue accepts (int64, float64), for values decoded
// elsewhere (int, json.Number).
func normalize(v any) any {
	switch v := v.(type) {
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float32:
		return float64(v)
	case json.Number:
		var out any
		if err := utiljson.Unmarshal([]byte(v.String()), &out); err == nil {
			return out
		}
		return v.String()
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = normalize(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = normalize(x)
		}
		return l
	}
	return v
}
