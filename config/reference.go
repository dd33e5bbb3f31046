package config

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"iter"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// Reference renders every key of Config as a Markdown table row: the
// dotted key, its default and the field's doc comment, read from the
// package's source in dir. defaults holds each key's effective default
// (package options fills in the libraries' own, which config leaves
// zero), engine an engine's (serve.engines[]). docs/config.md is its
// output; package options' TestReference keeps the two in step.
func Reference(dir string, defaults Config, engine Engine) (string, error) {
	files, err := parseSources(dir)
	if err != nil {
		return "", err
	}
	docs := map[string]map[string]string{} // type name → field name → doc
	for _, ts := range typeSpecs(files) {
		if st, ok := ts.Type.(*ast.StructType); ok {
			docs[ts.Name.Name] = fieldDocs(st)
		}
	}
	var b strings.Builder
	b.WriteString("# Configuration reference\n\n")
	b.WriteString("Generated from the field docs of package `config` and the defaults the\n")
	b.WriteString("libraries declare by `go test ./options -run Reference -update`;\n")
	b.WriteString("`TestReference` fails when this file and the code disagree. Every key\n")
	b.WriteString("can be set in the YAML file\n")
	b.WriteString("(`-config FILE`), with `-set key=value`, or from the environment as\n")
	b.WriteString("`WINNOW_<SECTION>_<KEY>` (`serve.answer_cache_bytes` is\n")
	b.WriteString("`WINNOW_SERVE_ANSWER_CACHE_BYTES`). Zero or absent means the default.\n")
	b.WriteString("Lists of structures (`serve.engines`) can only be set in YAML.\n")
	def := reflect.ValueOf(defaults)
	var walkType func(v reflect.Value, prefix string, depth int) error
	walkType = func(v reflect.Value, prefix string, depth int) error {
		t := v.Type()
		fields := docs[t.Name()]
		if fields == nil {
			return fmt.Errorf("no declaration found for type %s", t.Name())
		}
		var sub []int
		type list struct {
			elem reflect.Value
			key  string
		}
		var lists []list
		if depth > 0 {
			fmt.Fprintf(&b, "\n## `%s`\n\n", prefix)
			if d := strings.TrimSpace(typeDoc(files, t.Name())); d != "" {
				b.WriteString(oneParagraph(d) + "\n\n")
			}
			b.WriteString("| key | default | meaning |\n|---|---|---|\n")
		}
		for i := range t.NumField() {
			f := t.Field(i)
			key, ok := yamlKey(f, prefix)
			if !ok {
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[Duration]() {
				sub = append(sub, i)
				continue
			}
			doc, ok := fields[f.Name]
			if !ok || strings.TrimSpace(doc) == "" {
				return fmt.Errorf("%s.%s (%s) has no doc comment", t.Name(), f.Name, key)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", key, defaultText(v.Field(i)), oneParagraph(doc))
			if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct {
				elem := reflect.New(f.Type.Elem()).Elem()
				if f.Type.Elem() == reflect.TypeFor[Engine]() {
					elem = reflect.ValueOf(engine)
				}
				// A list's element gets its section after this
				// section's nested ones.
				lists = append(lists, list{elem, key + "[]"})
			}
		}
		for _, i := range sub {
			key, _ := yamlKey(t.Field(i), prefix)
			if err := walkType(v.Field(i), key, depth+1); err != nil {
				return err
			}
		}
		for _, l := range slices.Backward(lists) {
			if err := walkType(l.elem, l.key, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walkType(def, "", 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// typeDoc is the doc comment of the named type: its own, or its
// declaration's when it stands alone there.
func typeDoc(files []*ast.File, name string) string {
	for g, ts := range typeSpecs(files) {
		if ts.Name.Name == name {
			if ts.Doc != nil {
				return ts.Doc.Text()
			}
			return g.Doc.Text()
		}
	}
	return ""
}

// parseSources parses the Go files of dir but its tests, with their
// comments.
func parseSources(dir string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("config: no Go source in %s", dir)
	}
	return files, nil
}

// typeSpecs yields every type declared in files, with its declaration.
func typeSpecs(files []*ast.File) iter.Seq2[*ast.GenDecl, *ast.TypeSpec] {
	return func(yield func(*ast.GenDecl, *ast.TypeSpec) bool) {
		for _, f := range files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range g.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && !yield(g, ts) {
						return
					}
				}
			}
		}
	}
}

// fieldDocs maps each field of st to its doc comment. A field declared
// under a comment that documents it with its neighbours ("LeaseTTL,
// LeaseRenew and LeaseWait shape ...") shares it.
func fieldDocs(st *ast.StructType) map[string]string {
	m := map[string]string{}
	last := ""
	for _, fl := range st.Fields.List {
		doc := fl.Doc.Text()
		for _, n := range fl.Names {
			if doc == "" && strings.Contains(last, n.Name) {
				doc = last
			}
			m[n.Name] = doc
		}
		if fl.Doc != nil {
			last = doc
		}
	}
	return m
}

// oneParagraph joins a doc comment's lines into one table cell, with Go
// doc links ([Name]) kept as code.
func oneParagraph(doc string) string {
	var p comment.Parser
	d := p.Parse(doc)
	var pr comment.Printer
	text := string(pr.Text(d))
	text = strings.Join(strings.Fields(text), " ")
	return strings.ReplaceAll(text, "|", "\\|")
}

// defaultText renders a default value for the table.
func defaultText(v reflect.Value) string {
	if v.IsZero() {
		return "—"
	}
	switch x := v.Interface().(type) {
	case Duration:
		return "`" + x.String() + "`"
	case string:
		return "`" + x + "`"
	}
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return "`" + strings.Join(parts, ", ") + "`"
	}
	return "`" + fmt.Sprint(v.Interface()) + "`"
}
