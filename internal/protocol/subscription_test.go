package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Beyond a few tags duplicates are found by map (a peer's expression of 100k tags took
// seconds under the fake broker's lock): the result is the same, in Java's order.
func TestBuildSubscriptionManyTags(t *testing.T) {
	var parts []string
	var want []string
	for i := range 40 {
		tag := fmt.Sprintf("t%d", i%20)
		parts = append(parts, tag)
		if i < 20 {
			want = append(want, tag)
		}
	}
	parts = append(parts, "Aa", "BB") // the same Java hash code
	want = append(want, "Aa", "BB")
	sd, err := BuildSubscription("t", strings.Join(parts, " || "))
	require.NoError(t, err)
	require.Equal(t, want, sd.TagsSet)
	require.Len(t, sd.CodeSet, 21)
	require.Equal(t, JavaStringHash("Aa"), sd.CodeSet[20])
}
