package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// block is one table of a report, rendered as plain text (WriteTable) or
// as markdown (WriteMarkdown).
type block struct {
	// title is written before the table: lines of text, or one markdown
	// paragraph.
	title []string
	// sub indents the table's lines in plain text, under its title.
	sub  bool
	head []string
	rows [][]string
	// notes are written after the table. A block without head has no
	// table, only its title and notes.
	notes []string
}

// text writes b as plain text, its columns aligned.
func (b block) text(w *strings.Builder) error {
	for _, l := range b.title {
		fmt.Fprintln(w, l)
	}
	indent := ""
	if b.sub {
		indent = "  "
	}
	if b.head != nil {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range append([][]string{b.head}, b.rows...) {
			fmt.Fprintf(tw, "%s%s\t\n", indent, strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, l := range b.notes {
		fmt.Fprintf(w, "%s%s\n", indent, l)
	}
	return nil
}

// markdown writes b as a markdown table, its title and notes as
// paragraphs. The first column is aligned left, the others right.
func (b block) markdown(w *strings.Builder) {
	if len(b.title) > 0 {
		fmt.Fprintf(w, "%s\n\n", strings.Join(b.title, " "))
	}
	if b.head == nil {
		for _, l := range b.notes {
			fmt.Fprintf(w, "- %s\n", l)
		}
		return
	}
	row := func(cells []string) {
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(strings.TrimSpace(c), "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	row(append([]string(nil), b.head...))
	sep := make([]string, len(b.head))
	for i := range sep {
		sep[i] = "---:"
	}
	sep[0] = "---"
	fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
	for _, r := range b.rows {
		row(append([]string(nil), r...))
	}
	if len(b.notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(b.notes, " "))
	}
}

// writeText writes the header lines and the blocks as plain text, a blank
// line between them, with no trailing spaces.
func writeText(w io.Writer, header []string, blocks []block, footer string) error {
	var b strings.Builder
	for _, l := range header {
		fmt.Fprintln(&b, l)
	}
	for _, bl := range blocks {
		b.WriteString("\n")
		if err := bl.text(&b); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "\n%s\n", footer)
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// writeMarkdown writes the header as a paragraph and the blocks as
// markdown, a blank line between them.
func writeMarkdown(w io.Writer, header []string, blocks []block) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", strings.Join(header, " "))
	for _, bl := range blocks {
		b.WriteString("\n")
		bl.markdown(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
