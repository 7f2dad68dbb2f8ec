//! Checks that keep the architecture of `engine/src` true (docs/architecture.md):
//! - the CPU reference is a consumer: nothing outside `cpu_reference/` names it;
//! - the scene is data: `scene/` names no other engine module;
//! - the solver kind is matched in `stepper/mod.rs` only and the collision method in
//!   `contact/mod.rs` only (adding a stepper or a contact method is one arm there);
//! - no two modules import each other, directly or through others.
//!
//! The sources are read as text: comments and `#[cfg(test)]` modules are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir` with its module path (`stepper::newton`, `` for lib.rs).
fn modules(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in entries {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(dir).expect("under src");
                let mut parts: Vec<String> = rel
                    .with_extension("")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
                    parts.pop();
                }
                out.push((parts.join("::"), p));
            }
        }
    }
    out.sort();
    out
}

/// The code of a file: line comments, doc comments and `#[cfg(test)]` items removed.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    strip_tests(&strip_comments(&text))
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            // Good enough for this code base: no `//` inside string literals of paths.
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Removes every `#[cfg(test)]` item (the attribute and the braced block that follows).
fn strip_tests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let Some(open) = after.find('{') else {
            rest = "";
            break;
        };
        if after.find(';').is_some_and(|semi| semi < open) {
            let semi = after.find(';').unwrap_or(0);
            // `#[cfg(test)] mod tests;` or a one-line item.
            rest = &after[semi + 1..];
            continue;
        }
        let mut depth = 0usize;
        let mut end = after.len();
        for (k, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The `crate::`/`super::`/`self::` paths of `code`, with `{a, b}` groups expanded.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .find(|p| code_at(&bytes, i, p) && (i == 0 || !is_ident(bytes[i - 1])));
        let Some(_) = starts else {
            i += 1;
            continue;
        };
        let mut j = i;
        let mut depth = 0;
        while j < bytes.len() {
            let c = bytes[j];
            if c == '{' {
                depth += 1;
            } else if c == '}' {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            } else if depth == 0 && !(is_ident(c) || c == ':') {
                break;
            }
            j += 1;
        }
        let raw: String = bytes[i..j].iter().collect();
        expand(&raw, &mut out);
        i = j.max(i + 1);
    }
    out
}

fn code_at(s: &[char], i: usize, p: &str) -> bool {
    p.chars().enumerate().all(|(k, c)| s.get(i + k) == Some(&c))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn expand(raw: &str, out: &mut Vec<String>) {
    // `x as y` keeps `x`: mark the rename before dropping the whitespace.
    let raw = raw.replace(" as ", "@");
    let raw: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
    match raw.find('{') {
        None => out.push(
            raw.split('@')
                .next()
                .unwrap_or(&raw)
                .trim_end_matches(':')
                .to_string(),
        ),
        Some(open) => {
            let prefix = raw[..open].trim_end_matches(':');
            let inner = &raw[open + 1..raw.rfind('}').unwrap_or(raw.len())];
            let mut depth = 0;
            let mut start = 0;
            let mut items = Vec::new();
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&inner[start..k]);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            items.push(&inner[start..]);
            for it in items.into_iter().filter(|s| !s.is_empty()) {
                let it = it.split('@').next().unwrap_or(it);
                if it == "self" {
                    out.push(prefix.to_string());
                } else {
                    expand(&format!("{prefix}::{it}"), out);
                }
            }
        }
    }
}

/// The module a path inside module `cur` refers to (the longest known prefix).
fn resolve(cur: &str, path: &str, known: &BTreeSet<String>) -> Option<String> {
    let mut segs: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if cur.is_empty() {
        Vec::new()
    } else {
        cur.split("::").collect()
    };
    match segs.first() {
        Some(&"crate") => {
            base.clear();
            segs.remove(0);
        }
        Some(&"self") => {
            segs.remove(0);
        }
        Some(&"super") => {
            while segs.first() == Some(&"super") {
                base.pop();
                segs.remove(0);
            }
        }
        _ => return None,
    }
    (0..=segs.len()).rev().find_map(|k| {
        let m: Vec<&str> = base.iter().chain(&segs[..k]).copied().collect();
        let m = m.join("::");
        known.contains(&m).then_some(m)
    })
}

/// Module → modules it names (parents and children of a module excluded: a module and its
/// submodules are one unit).
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(&src_dir());
    let known: BTreeSet<String> = mods.iter().map(|(m, _)| m.clone()).collect();
    let mut g = BTreeMap::new();
    for (m, p) in &mods {
        let mut to = BTreeSet::new();
        for path in paths(&code(p)) {
            if let Some(t) = resolve(m, &path, &known) {
                let related = t.is_empty()
                    || t == *m
                    || m.starts_with(&format!("{t}::"))
                    || t.starts_with(&format!("{m}::"));
                if !related {
                    to.insert(t);
                }
            }
        }
        g.insert(m.clone(), to);
    }
    g
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        let g = s.g;
        for w in g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v].min(lw);
                s.low.insert(v, lv);
            } else if s.on.contains(w) {
                let lv = s.low[v].min(s.index[w]);
                s.low.insert(v, lv);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_module_outside_the_reference_names_it() {
    let mut found = Vec::new();
    for (m, p) in modules(&src_dir()) {
        if m.is_empty() || m == "cpu_reference" || m.starts_with("cpu_reference::") {
            continue;
        }
        if code(&p).contains("cpu_reference") {
            found.push(m);
        }
    }
    assert!(
        found.is_empty(),
        "production modules name cpu_reference: {found:?}"
    );
}

#[test]
fn the_scene_names_no_other_engine_module() {
    let mut found = Vec::new();
    for (m, p) in modules(&src_dir()) {
        if !(m == "scene" || m.starts_with("scene::")) {
            continue;
        }
        for path in paths(&code(&p)) {
            let absolute = path.starts_with("crate::") && !path.starts_with("crate::scene");
            let escapes = m.starts_with("scene::") && path.starts_with("super::super")
                || (m == "scene" && path.starts_with("super::"));
            if absolute || escapes {
                found.push(format!("{m}: {path}"));
            }
        }
    }
    assert!(found.is_empty(), "scene/ names engine modules: {found:?}");
}

#[test]
fn solver_kind_and_collision_method_are_matched_in_one_place() {
    let tools = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tools/src");
    for (token, home) in [
        ("SolverKind::", "stepper"),
        ("CollisionMethod::", "contact"),
    ] {
        let mut places = BTreeSet::new();
        for (m, p) in modules(&src_dir()).into_iter().chain(modules(&tools)) {
            if m == "scene" || m.starts_with("scene::") {
                continue;
            }
            if code(&p).contains(token) {
                places.insert(if p.starts_with(&tools) {
                    format!("tools::{m}")
                } else {
                    m
                });
            }
        }
        let want: BTreeSet<String> = [home.to_string()].into();
        assert_eq!(
            places, want,
            "{token} outside scene/ must appear in {home} only"
        );
    }
}

#[test]
fn no_modules_import_each_other() {
    let found = cycles(&import_graph());
    assert!(found.is_empty(), "import circles: {found:?}");
}

#[test]
fn the_checks_see_what_they_look_for() {
    // The path parser and the cycle finder on a made-up pair of modules.
    let p = paths("use crate::a::{b::C, d as e};\nlet x = super::f::g();");
    assert_eq!(p, ["crate::a::b::C", "crate::a::d", "super::f::g"]);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycles(&g), [vec!["a", "b", "c"]]);
    // The real graph is not empty: modules do import each other.
    let real = import_graph();
    assert!(real
        .get("simulation")
        .is_some_and(|t| t.contains("stepper")));
    assert!(real
        .get("stepper::newton")
        .is_some_and(|t| t.contains("state")));
    assert_eq!(
        strip_tests("a\n#[cfg(test)]\nmod t { fn x() {} }\nb"),
        "a\n\nb"
    );
}
