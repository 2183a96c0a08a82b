package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

var completionCommand = &command{
	name:    "completion",
	args:    "bash|zsh|fish",
	summary: "print the shell completion script for bash, zsh or fish",
	help: `
Completion prints a script that completes zklock's commands and flags (and
file names for the --tls-* flags) in bash, zsh or fish. Load it:

  bash:  source <(zklock completion bash)        # e.g. in ~/.bashrc
  zsh:   zklock completion zsh > "${fpath[1]}/_zklock"   # then restart zsh
  fish:  zklock completion fish > ~/.config/fish/completions/zklock.fish`,
	setup: func(fs *flag.FlagSet, cf *connFlags) func(*env, []string) error {
		return func(e *env, args []string) error {
			if len(args) != 1 {
				return usageErrorf("completion", "one shell expected: bash, zsh or fish")
			}
			write, ok := map[string]func(io.Writer) error{"bash": writeBash, "zsh": writeZsh, "fish": writeFish}[args[0]]
			if !ok {
				return usageErrorf("completion", "unknown shell %q: bash, zsh or fish", args[0])
			}
			return write(e.stdout)
		}
	},
}

// complFlag is a flag as the completion scripts see it.
type complFlag struct {
	name  string
	desc  string // one short line, safe in every shell's quoting
	value bool   // takes a value
	file  bool   // the value is a file name
}

// complCommand is a command and its flags, connection flags included.
type complCommand struct {
	name, summary string
	flags         []complFlag
	words         []string // fixed arguments (completion's shells)
}

// complModel reads every command's flags from its flag set, so the scripts
// cannot drift from the commands.
func complModel() (top []complFlag, cmds []complCommand) {
	fs := newFlagSet("zklock")
	var cf connFlags
	cf.register(fs)
	fs.Bool("version", false, "print zklock's version and exit")
	fs.Bool("help", false, "show help")
	top = complFlags(fs)
	for _, c := range commands {
		fs := newFlagSet("zklock " + c.name)
		var cf connFlags
		cf.register(fs)
		c.setup(fs, &cf)
		fs.Bool("help", false, "show help")
		cc := complCommand{name: c.name, summary: shellSafe(c.summary), flags: complFlags(fs)}
		if c.name == "completion" {
			cc.words = []string{"bash", "zsh", "fish"}
		}
		cmds = append(cmds, cc)
	}
	cmds = append(cmds, complCommand{name: "help", summary: "show the manual of zklock or of a command"})
	return top, cmds
}

func complFlags(fs *flag.FlagSet) []complFlag {
	var out []complFlag
	fs.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
		out = append(out, complFlag{
			name:  f.Name,
			desc:  shellSafe(usage),
			value: !(isBool && bf.IsBoolFlag()),
			file:  strings.HasPrefix(f.Name, "tls-") && f.Name != "tls" && f.Name != "tls-server-name",
		})
	})
	return out
}

// shellSafe shortens a description to its first clause and keeps only
// characters that need no quoting in any of the three scripts.
func shellSafe(s string) string {
	if i := strings.IndexAny(s, "(:;"); i > 0 {
		s = s[:i]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(" ,./-+_=", r):
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}

func dashed(f complFlag) string {
	if len(f.name) == 1 {
		return "-" + f.name
	}
	return "--" + f.name
}

func writeBash(w io.Writer) error {
	top, cmds := complModel()
	var b strings.Builder
	b.WriteString("# bash completion for zklock (zklock completion bash)\n_zklock() {\n")
	b.WriteString("    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n")
	b.WriteString("    local cmd='' i w\n")
	// flags that take a value, so their value is not taken for the command
	var values, files []string
	seen := map[string]bool{}
	add := func(fs []complFlag) {
		for _, f := range fs {
			if f.value && !seen[f.name] {
				seen[f.name] = true
				values = append(values, "-"+f.name, "--"+f.name)
				if f.file {
					files = append(files, "-"+f.name, "--"+f.name)
				}
			}
		}
	}
	add(top)
	for _, c := range cmds {
		add(c.flags)
	}
	fmt.Fprintf(&b, "    local values=' %s '\n", strings.Join(values, " "))
	fmt.Fprintf(&b, "    local files=' %s '\n", strings.Join(files, " "))
	b.WriteString(`    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -- ]]; then
            [[ $cmd == run ]] && { COMPREPLY=($(compgen -c -- "$cur")); return; }
        elif [[ $w == -* ]]; then
            [[ $w != *=* && $values == *" $w "* ]] && ((i++))
        elif [[ -z $cmd ]]; then
            cmd=$w
        fi
    done
    if [[ $files == *" $prev "* ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    if [[ $values == *" $prev "* ]]; then
        COMPREPLY=()
        return
    fi
    local words=''
    case $cmd in
`)
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(&b, "    '') words='%s'; [[ $cur == -* ]] && words='%s' ;;\n", strings.Join(names, " "), flagWords(top))
	for _, c := range cmds {
		switch {
		case c.name == "help":
			fmt.Fprintf(&b, "    help) words='%s' ;;\n", strings.Join(names[:len(names)-1], " "))
		case len(c.words) > 0:
			fmt.Fprintf(&b, "    %s) words='%s' ;;\n", c.name, strings.Join(c.words, " "))
		default:
			fmt.Fprintf(&b, "    %s) [[ $cur == -* ]] && words='%s' ;;\n", c.name, flagWords(c.flags))
		}
	}
	b.WriteString("    *) words='' ;;\n    esac\n")
	b.WriteString("    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -o default -F _zklock zklock\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func flagWords(fs []complFlag) string {
	var ws []string
	for _, f := range fs {
		ws = append(ws, dashed(f))
	}
	return strings.Join(ws, " ")
}

func writeZsh(w io.Writer) error {
	top, cmds := complModel()
	var b strings.Builder
	b.WriteString("#compdef zklock\n# zsh completion for zklock (zklock completion zsh)\n\n_zklock() {\n")
	b.WriteString("    local curcontext=$curcontext state line\n    typeset -A opt_args\n")
	b.WriteString("    local -a commands\n    commands=(\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "        '%s:%s'\n", c.name, c.summary)
	}
	b.WriteString("    )\n    _arguments -C \\\n")
	for _, f := range top {
		fmt.Fprintf(&b, "        %s \\\n", zshSpec(f))
	}
	b.WriteString("        '1: :->command' \\\n        '*:: :->args'\n")
	b.WriteString("    case $state in\n    command)\n        _describe -t commands 'zklock command' commands\n        ;;\n    args)\n        case $line[1] in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "        %s)\n", c.name)
		switch {
		case c.name == "help":
			b.WriteString("            _describe -t commands 'zklock command' commands\n")
		case len(c.words) > 0:
			fmt.Fprintf(&b, "            _values shell %s\n", strings.Join(c.words, " "))
		default:
			b.WriteString("            _arguments \\\n")
			for _, f := range c.flags {
				fmt.Fprintf(&b, "                %s \\\n", zshSpec(f))
			}
			if c.name == "run" {
				b.WriteString("                '*:: :_normal'\n")
			} else {
				b.WriteString("                '*: :'\n")
			}
		}
		b.WriteString("            ;;\n")
	}
	b.WriteString("        esac\n        ;;\n    esac\n}\n\n_zklock \"$@\"\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func zshSpec(f complFlag) string {
	spec := "'" + dashed(f) + "[" + f.desc + "]"
	switch {
	case f.file:
		spec += ":file:_files"
	case f.value:
		spec += ":" + f.name + ": "
	}
	return spec + "'"
}

func writeFish(w io.Writer) error {
	top, cmds := complModel()
	var b strings.Builder
	b.WriteString("# fish completion for zklock (zklock completion fish)\n")
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(&b, "set -l zklock_commands %s\n", strings.Join(names, " "))
	b.WriteString("complete -c zklock -f\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c zklock -n 'not __fish_seen_subcommand_from $zklock_commands' -a %s -d '%s'\n", c.name, c.summary)
	}
	for _, f := range top {
		fmt.Fprintf(&b, "complete -c zklock -n 'not __fish_seen_subcommand_from $zklock_commands' %s\n", fishSpec(f))
	}
	for _, c := range cmds {
		cond := "'__fish_seen_subcommand_from " + c.name + "'"
		switch {
		case c.name == "help":
			fmt.Fprintf(&b, "complete -c zklock -n %s -a '%s'\n", cond, strings.Join(names[:len(names)-1], " "))
		case len(c.words) > 0:
			fmt.Fprintf(&b, "complete -c zklock -n %s -a '%s'\n", cond, strings.Join(c.words, " "))
		}
		for _, f := range c.flags {
			fmt.Fprintf(&b, "complete -c zklock -n %s %s\n", cond, fishSpec(f))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fishSpec(f complFlag) string {
	opt := "-l " + f.name
	if len(f.name) == 1 {
		opt = "-s " + f.name
	}
	switch {
	case f.file:
		opt += " -r -F"
	case f.value:
		opt += " -r"
	}
	return opt + " -d '" + f.desc + "'"
}
