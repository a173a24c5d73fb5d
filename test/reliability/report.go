package reliability

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the results as the suite's table (scenario, messages, lost,
// duplicates, seconds, notes), then every scenario's targets and notes.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "| scenario\t| messages\t| lost\t| duplicates\t| seconds\t| notes\t|")
	fmt.Fprintln(tw, "|---\t|---:\t|---:\t|---:\t|---:\t|---\t|")
	for _, r := range results {
		fmt.Fprintf(tw, "| %s. %s\t| %d\t| %d\t| %d (%.3f %%)\t| %.1f\t| %s\t|\n",
			r.Scenario, r.Title, r.Messages, r.Lost, r.Duplicates, r.DuplicatePercent(), r.Seconds, r.summary())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n%s. %s\n", r.Scenario, r.Title)
		for _, t := range r.Targets {
			mark := "met    "
			if !t.Met {
				mark = "NOT MET"
			}
			fmt.Fprintf(w, "  [%s] %s: %s\n", mark, t.Name, t.Detail)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	return nil
}

// summary is the table's notes cell: the targets met, or those not met.
func (r Result) summary() string {
	var missed []string
	for _, t := range r.Targets {
		if !t.Met {
			missed = append(missed, t.Name)
		}
	}
	if len(missed) > 0 {
		return "NOT MET: " + strings.Join(missed, "; ")
	}
	return fmt.Sprintf("all %d targets met", len(r.Targets))
}

// Met reports whether every target of the result was met.
func (r Result) Met() bool {
	for _, t := range r.Targets {
		if !t.Met {
			return false
		}
	}
	return true
}
