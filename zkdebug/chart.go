package zkdebug

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// chart is one inline SVG chart of the page, laid out here and drawn by
// the template (which escapes every text and attribute).
type chart struct {
	Kind   string // wait, queue or lost: the svg's class
	Title  string // what it shows, for the svg's title and aria-label
	Width  int
	Height int
	Box    string // the axes: the plot area's left and bottom sides
	Left   string // the plot area's left and right edges, and its middle
	Right  string
	Middle string
	XTicks []tick
	YTicks []tick
	Bars   []mark
	Lines  []line
	Dots   []mark
	Legend []mark // X, Y of a swatch; Text its label
	Empty  string // said in the plot area when there is nothing to draw
}

type tick struct {
	X, Y   string
	Label  string
	Anchor string // an x tick's text-anchor: the first starts at its bucket, the last ends at it
}

// mark is a bar (X, Y, W, H), a dot (X, Y) or a legend entry (X, Y, Text),
// with a class for its colour and a title shown on hover.
type mark struct {
	Class      string
	X, Y, W, H string
	Text       string
	Title      string
}

type line struct {
	Class string
	D     string // path data
}

// The charts' geometry, in CSS pixels.
const (
	chartW      = 310
	chartH      = 126
	plotLeft    = 46
	plotRight   = chartW - 8
	plotTop     = 22 // the legend is above
	plotBottom  = chartH - 20
	legendTop   = 4
	legendSpace = 96 // the lost chart's legend, right of its plot
)

func px(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

// frame returns an empty chart with its x axis: one bucket per slot.
func (v *historyView) frame(kind, title string, right float64) chart {
	c := chart{Kind: kind, Title: title, Width: chartW, Height: chartH,
		Box:  fmt.Sprintf("M%d,%d V%d H%s", plotLeft, plotTop, plotBottom, px(right)),
		Left: px(plotLeft), Right: px(right), Middle: px((plotLeft + right) / 2)}
	layout := "15:04"
	if v.bucket < time.Minute {
		layout = "15:04:05"
	}
	for k, i := range []int{0, historySlots / 2, historySlots - 1} {
		if k == 1 && right-plotLeft < 200 {
			continue // a narrow plot has room for its ends only
		}
		at := v.From.Add(time.Duration(i) * v.bucket).Local()
		c.XTicks = append(c.XTicks, tick{X: px(xAt(i, right)), Y: px(plotBottom + 14), Label: at.Format(layout),
			Anchor: []string{"start", "middle", "end"}[k]})
	}
	return c
}

// xAt is the middle of bucket i.
func xAt(i int, right float64) float64 {
	return plotLeft + (float64(i)+0.5)*(right-plotLeft)/historySlots
}

func barWidth(right float64) float64 { return (right - plotLeft) / historySlots * 0.7 }

// when says which bucket a mark is about.
func (v *historyView) when(i int) string {
	at := v.From.Add(time.Duration(i) * v.bucket).Local()
	if v.bucket < time.Minute {
		return at.Format("15:04:05")
	}
	return at.Format("15:04")
}

func (v *historyView) charts(c *classView) [3]chart {
	return [3]chart{v.waitChart(c), v.queueChart(c), v.lostChart(c)}
}

// waitChart draws the p50 and p99 waits of each bucket on a log scale.
func (v *historyView) waitChart(c *classView) chart {
	ch := v.frame("wait", "wait for the lock, p50 and p99 per "+v.unit()+" (acquired)", plotRight)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, b := range c.Buckets {
		if b.WaitP50Seconds != nil {
			lo, hi = min(lo, *b.WaitP50Seconds), max(hi, *b.WaitP99Seconds)
		}
	}
	if math.IsInf(lo, 1) {
		ch.Empty = "no acquire"
		return ch
	}
	// Whole decades, at least two.
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi-dlo < 2 {
		dlo = dhi - 2
	}
	y := func(s float64) float64 {
		return plotBottom - (math.Log10(s)-dlo)/(dhi-dlo)*(plotBottom-plotTop)
	}
	for d := dlo; d <= dhi; d++ {
		ch.YTicks = append(ch.YTicks, tick{X: px(plotLeft - 4), Y: px(y(math.Pow(10, d))), Label: formatAge(seconds(math.Pow(10, d)))})
	}
	for _, q := range []struct {
		class string
		get   func(bucketView) *float64
	}{
		{"p99", func(b bucketView) *float64 { return b.WaitP99Seconds }},
		{"p50", func(b bucketView) *float64 { return b.WaitP50Seconds }},
	} {
		var d strings.Builder
		pen := "M"
		for i, b := range c.Buckets {
			s := q.get(b)
			if s == nil {
				pen = "M" // a bucket without acquires breaks the line
				continue
			}
			fmt.Fprintf(&d, "%s%s,%s ", pen, px(xAt(i, plotRight)), px(y(*s)))
			pen = "L"
			ch.Dots = append(ch.Dots, mark{Class: q.class, X: px(xAt(i, plotRight)), Y: px(y(*s)),
				Title: fmt.Sprintf("%s: %s ≤ %s (%d acquired)", v.when(i), q.class, formatAge(seconds(*s)), b.Acquired)})
		}
		ch.Lines = append(ch.Lines, line{Class: q.class, D: strings.TrimSpace(d.String())})
	}
	ch.Legend = []mark{{Class: "p99", X: px(plotLeft), Y: px(legendTop), Text: "p99"},
		{Class: "p50", X: px(plotLeft + 40), Y: px(legendTop), Text: "p50"}}
	return ch
}

// queueChart draws, per bucket, the most acquires waiting at once in this
// process (bars) and the most nodes ahead of a new node in its queue
// (dots), on a linear scale.
func (v *historyView) queueChart(c *classView) chart {
	ch := v.frame("queue", "queue: most waiting here (bars) and most nodes ahead at enqueue (dots), per "+v.unit(), plotRight)
	top := int32(0)
	for _, b := range c.Buckets {
		top = max(top, b.MaxWaiting, b.MaxAhead)
	}
	ymax := niceCeil(float64(max(top, 1)))
	y := func(n float64) float64 { return plotBottom - n/ymax*(plotBottom-plotTop) }
	ch.YTicks = []tick{{X: px(plotLeft - 4), Y: px(y(0)), Label: "0"}, {X: px(plotLeft - 4), Y: px(y(ymax)), Label: px(ymax)}}
	w := barWidth(plotRight)
	for i, b := range c.Buckets {
		x := xAt(i, plotRight)
		if b.MaxWaiting > 0 {
			ch.Bars = append(ch.Bars, mark{Class: "waiting", X: px(x - w/2), Y: px(y(float64(b.MaxWaiting))), W: px(w),
				H: px(y(0) - y(float64(b.MaxWaiting))), Title: fmt.Sprintf("%s: up to %d waiting here", v.when(i), b.MaxWaiting)})
		}
		if b.MaxAhead > 0 {
			ch.Dots = append(ch.Dots, mark{Class: "ahead", X: px(x), Y: px(y(float64(b.MaxAhead))),
				Title: fmt.Sprintf("%s: up to %d nodes ahead at enqueue", v.when(i), b.MaxAhead)})
		}
	}
	ch.Legend = []mark{{Class: "waiting", X: px(plotLeft), Y: px(legendTop), Text: "waiting here"},
		{Class: "ahead", X: px(plotLeft + 90), Y: px(legendTop), Text: "nodes ahead at enqueue"}}
	return ch
}

// lostChart draws the leases lost in each bucket, stacked by reason.
func (v *historyView) lostChart(c *classView) chart {
	right := float64(plotRight - legendSpace)
	ch := v.frame("lost", "leases lost per "+v.unit()+", by reason", right)
	if c.Lost == 0 {
		ch.Empty = "no lease lost"
		return ch
	}
	top := uint32(0)
	seen := map[string]bool{}
	for _, b := range c.Buckets {
		var n uint32
		for r, k := range b.Lost {
			n += k
			seen[r] = true
		}
		top = max(top, n)
	}
	ymax := niceCeil(float64(top))
	y := func(n float64) float64 { return plotBottom - n/ymax*(plotBottom-plotTop) }
	ch.YTicks = []tick{{X: px(plotLeft - 4), Y: px(y(0)), Label: "0"}, {X: px(plotLeft - 4), Y: px(y(ymax)), Label: px(ymax)}}
	w := barWidth(right)
	names := reasonNames()
	for i, b := range c.Buckets {
		x, base := xAt(i, right), 0.0
		for _, r := range names {
			n := b.Lost[r]
			if n == 0 {
				continue
			}
			ch.Bars = append(ch.Bars, mark{Class: "loss-" + r, X: px(x - w/2), Y: px(y(base + float64(n))), W: px(w),
				H: px(y(base) - y(base+float64(n))), Title: fmt.Sprintf("%s: %d lost (%s)", v.when(i), n, r)})
			base += float64(n)
		}
	}
	ly := float64(plotTop)
	for _, r := range names {
		if seen[r] {
			ch.Legend = append(ch.Legend, mark{Class: "loss-" + r, X: px(right + 10), Y: px(ly), Text: r})
			ly += 14
		}
	}
	return ch
}

// reasonNames lists the loss reasons in the order the lost chart stacks
// them, "other" last.
func reasonNames() []string {
	names := make([]string, 0, len(lossNames)+1)
	for _, r := range lossNames {
		names = append(names, r.String())
	}
	return append(names, "other")
}

// unit names a bucket's width.
func (v *historyView) unit() string {
	if v.bucket == time.Minute {
		return "minute"
	}
	return v.bucket.String()
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten.
func niceCeil(n float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(n)))
	for _, m := range []float64{1, 2, 5, 10} {
		if n <= m*p {
			return m * p
		}
	}
	return 10 * p
}
