//! Where the fields of a scene text are: the byte span of every key, value and array element by
//! its field path (`body[0].material.youngs_modulus`), so that an error found at a byte offset
//! (by the TOML deserializer) or at a field path (by the checks) names both the field and the
//! line.

use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// The spans of one scene text's keys, values and array elements, by field path.
pub(super) struct Locations {
    /// (span, field path) of every key, value and array element.
    spans: Vec<(Range<usize>, String)>,
    /// Byte offset of the start of every line.
    line_starts: Vec<usize>,
}

/// 1-based line of byte offset `pos` in `text`.
pub(super) fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// `parent.key`, or `key` at the top.
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

impl Locations {
    /// The locations in `text` (none when it is not valid TOML).
    pub(super) fn of(text: &str) -> Option<Locations> {
        let table = DeTable::parse(text).ok()?;
        let mut spans = Vec::new();
        collect_table(table.get_ref(), "", &mut spans);
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Some(Locations { spans, line_starts })
    }

    /// 1-based line of byte offset `pos`.
    pub(super) fn line_of(&self, pos: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= pos).max(1)
    }

    /// The field path of the smallest key, value or element whose span holds byte `pos` (the
    /// deepest on ties).
    pub(super) fn path_at(&self, pos: usize) -> Option<&str> {
        self.spans
            .iter()
            .filter(|(s, _)| s.start <= pos && pos < s.end.max(s.start + 1))
            .min_by(|(a, pa), (b, pb)| {
                (a.end - a.start)
                    .cmp(&(b.end - b.start))
                    .then(pb.len().cmp(&pa.len()))
            })
            .map(|(_, p)| p.as_str())
    }

    /// The line where `path` is written, or failing that the nearest enclosing field that is
    /// (`body[0].material` for a missing `body[0].material.density`).
    pub(super) fn line_of_path(&self, path: &str) -> Option<usize> {
        let mut p = path;
        loop {
            if let Some((s, _)) = self.spans.iter().find(|(_, q)| q == p) {
                return Some(self.line_of(s.start));
            }
            p = parent_path(p)?;
        }
    }
}

/// The enclosing field of a path: `a.b[2]` → `a.b`, `a.b` → `a`, `a` → none.
pub(super) fn parent_path(p: &str) -> Option<&str> {
    let cut = p.rfind(['.', '['])?;
    Some(&p[..cut])
}

/// Whether field path `path` is `prefix` or lies inside it.
pub(super) fn path_within(path: &str, prefix: &str) -> bool {
    path == prefix
        || (path.starts_with(prefix)
            && matches!(path.as_bytes().get(prefix.len()), Some(b'.' | b'[')))
}

fn collect_table(t: &DeTable<'_>, path: &str, out: &mut Vec<(Range<usize>, String)>) {
    for (k, v) in t.iter() {
        let p = join(path, k.get_ref());
        out.push((k.span(), p.clone()));
        collect_value(v.get_ref(), v.span(), &p, out);
    }
}

fn collect_value(
    v: &DeValue<'_>,
    span: Range<usize>,
    path: &str,
    out: &mut Vec<(Range<usize>, String)>,
) {
    out.push((span, path.to_string()));
    match v {
        DeValue::Table(t) => collect_table(t, path, out),
        DeValue::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                collect_value(e.get_ref(), e.span(), &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_lines_of_keys_values_and_elements() {
        let text = "[simulation]\nsubsteps = 2\n\n[[body]]\nname = \"a\"\n\
                    material = { youngs_modulus = 1e5 }\n[[body]]\nname = \"b\"\n\
                    gravity = [1.0, \"x\", 3.0]\n[body.material]\ndensity = 3.0\n";
        let l = Locations::of(text).unwrap();
        let at = |s: &str| l.path_at(text.find(s).unwrap()).map(str::to_string);
        assert_eq!(
            at("1e5").as_deref(),
            Some("body[0].material.youngs_modulus")
        );
        assert_eq!(
            at("youngs").as_deref(),
            Some("body[0].material.youngs_modulus")
        );
        assert_eq!(at("\"x\"").as_deref(), Some("body[1].gravity[1]"));
        assert_eq!(at("[body.material]").as_deref(), Some("body[1].material"));
        assert_eq!(at("2\n").as_deref(), Some("simulation.substeps"));
        assert_eq!(l.line_of_path("body[1].material.density"), Some(11));
        assert_eq!(l.line_of_path("body[1].material.poisson_ratio"), Some(10));
        assert_eq!(l.line_of_path("body[0].name"), Some(5));
        assert_eq!(l.line_of_path("simulation.frame_rate"), Some(1));
        assert_eq!(l.line_of_path("xpbd.substeps"), None);
        assert!(path_within("body[1].material", "body[1]"));
        assert!(path_within("body[1]", "body[1]"));
        assert!(!path_within("body[10]", "body[1]"));
        assert!(!path_within("simulation.substepsx", "simulation.substeps"));
    }
}
