// Package chromiumtest starts Debian's headless Chromium for the tests
// that drive winnow's search page through chromedp: one place for the
// browser's flags (no network of its own, no sandbox, a fresh profile)
// and for the rule that a missing chromium skips the test on a developer
// machine and fails it on CI (CI=true).
package chromiumtest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start returns a chromedp context on a new headless Chromium with a
// window of width × height, valid for timeout and cancelled when the test
// ends; extra options are added to the allocator's (e.g. hide-scrollbars
// for screenshots). It skips t when chromium is not installed, and fails
// it on CI.
func Start(t testing.TB, timeout time.Duration, width, height int, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found on CI: .ci/run installs Debian's chromium")
		}
		t.Skip("chromium not found: apt-get install chromium")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height),
	}, extra...)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(ctx)
	t.Cleanup(cancelCtx)
	return ctx
}
