package config

import (
	"flag"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/config.md from config's field docs")

// referencePath is the generated configuration reference the manual links.
const referencePath = "../docs/config.md"

// TestReference fails when docs/config.md no longer says what the field
// docs of this package say: the reference is generated from them (and
// from Default's values), so a key added, renamed or documented anew
// shows up here. `go test ./config -run Reference -update` rewrites it.
func TestReference(t *testing.T) {
	got, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(referencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v (run: go test ./config -run Reference -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date with config's field docs; run: go test ./config -run Reference -update", referencePath)
	}
}

// TestReferenceCoversEveryKey checks the generator against Keys: a key the
// reference leaves out (a field with no doc comment, a struct it does not
// descend into) fails here.
func TestReferenceCoversEveryKey(t *testing.T) {
	got, err := reference()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		if !strings.Contains(got, "| `"+k+"` |") {
			t.Errorf("key %s missing from the reference", k)
		}
	}
}

// reference renders every key of Config as a Markdown table row: the
// dotted key, its default (Default's value) and the field's doc comment.
func reference() (string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return "", err
	}
	docs := map[string]map[string]string{} // type name → field name → doc
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range g.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					m := map[string]string{}
					last := ""
					for _, fl := range st.Fields.List {
						doc := fl.Doc.Text()
						for _, n := range fl.Names {
							// A field declared under a comment that
							// documents it with its neighbours ("LeaseTTL,
							// LeaseRenew and LeaseWait shape ...") shares it.
							if doc == "" && strings.Contains(last, n.Name) {
								doc = last
							}
							m[n.Name] = doc
						}
						if fl.Doc != nil {
							last = doc
						}
					}
					docs[ts.Name.Name] = m
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("# Configuration reference\n\n")
	b.WriteString("Generated from the field docs of package `config` by\n")
	b.WriteString("`go test ./config -run Reference -update`; `TestReference` fails when\n")
	b.WriteString("this file and the code disagree. Every key can be set in the YAML file\n")
	b.WriteString("(`-config FILE`), with `-set key=value`, or from the environment as\n")
	b.WriteString("`WINNOW_<SECTION>_<KEY>` (`serve.answer_cache_bytes` is\n")
	b.WriteString("`WINNOW_SERVE_ANSWER_CACHE_BYTES`). Zero or absent means the default.\n")
	b.WriteString("Lists of structures (`serve.engines`) can only be set in YAML.\n")
	def := reflect.ValueOf(Default())
	var walkType func(v reflect.Value, prefix string, depth int) error
	walkType = func(v reflect.Value, prefix string, depth int) error {
		t := v.Type()
		fields := docs[t.Name()]
		if fields == nil {
			return fmt.Errorf("no declaration found for type %s", t.Name())
		}
		var sub []int
		if depth > 0 {
			fmt.Fprintf(&b, "\n## `%s`\n\n", prefix)
			if d := strings.TrimSpace(typeDoc(pkgs, t.Name())); d != "" {
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
				defer func(elem reflect.Value, key string) { _ = walkType(elem, key+"[]", depth+1) }(elem, key)
			}
		}
		for _, i := range sub {
			key, _ := yamlKey(t.Field(i), prefix)
			if err := walkType(v.Field(i), key, depth+1); err != nil {
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

// typeDoc is the doc comment of the named type.
func typeDoc(pkgs map[string]*ast.Package, name string) string {
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range g.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == name {
						if ts.Doc != nil {
							return ts.Doc.Text()
						}
						return g.Doc.Text()
					}
				}
			}
		}
	}
	return ""
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
