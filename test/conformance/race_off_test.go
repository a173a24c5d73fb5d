//go:build !race

package conformance

// raceDetector reports whether the tests run under the race detector.
const raceDetector = false
