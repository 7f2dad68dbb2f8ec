//! `--set path.to.field=value` overrides, applied to the TOML document before it is checked.

use super::SceneError;

/// Splits `body[1].material.density` / `body.1.material.density` into path segments.
fn path_segments(path: &str) -> Vec<String> {
    path.replace('[', ".")
        .replace(']', "")
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Applies one `path=value` override to a TOML document.
pub(super) fn apply_override(doc: &mut toml::Table, spec: &str) -> Result<(), SceneError> {
    let err = |field: Option<String>, message: String| SceneError {
        file: format!("--set {spec}"),
        line: None,
        field,
        message,
    };
    let (path, value) = spec.split_once('=').ok_or_else(|| {
        err(
            None,
            format!("'{spec}' is not of the form path.to.field=value"),
        )
    })?;
    let segs = path_segments(path.trim());
    let Some((last, parents)) = segs.split_last() else {
        return Err(err(None, format!("'{spec}' names no field")));
    };
    // Parse the value as TOML (numbers, booleans, arrays, inline tables); bare words as strings.
    let value: toml::Value = match format!("v = {}", value.trim()).parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(value.trim().into())),
        Err(_) => toml::Value::String(value.trim().to_string()),
    };
    let Some((first, rest)) = parents.split_first() else {
        doc.insert(last.clone(), value);
        return Ok(());
    };
    let mut cur = doc
        .entry(first.clone())
        .or_insert_with(|| toml::Value::Table(Default::default()));
    for seg in rest {
        cur = match cur {
            toml::Value::Table(t) => t
                .entry(seg.clone())
                .or_insert_with(|| toml::Value::Table(Default::default())),
            toml::Value::Array(a) => {
                let i: usize = seg.parse().map_err(|_| {
                    err(Some(path.into()), format!("'{seg}' is not an array index"))
                })?;
                let len = a.len();
                a.get_mut(i).ok_or_else(|| {
                    err(
                        Some(path.into()),
                        format!("index {i} out of range (have {len})"),
                    )
                })?
            }
            _ => {
                return Err(err(
                    Some(path.into()),
                    format!("'{seg}' is not a table or array"),
                ))
            }
        };
    }
    match cur {
        toml::Value::Table(t) => {
            t.insert(last.clone(), value);
        }
        toml::Value::Array(a) => {
            let i: usize = last
                .parse()
                .map_err(|_| err(Some(path.into()), format!("'{last}' is not an array index")))?;
            let len = a.len();
            *a.get_mut(i).ok_or_else(|| {
                err(
                    Some(path.into()),
                    format!("index {i} out of range (have {len})"),
                )
            })? = value;
        }
        _ => {
            return Err(err(
                Some(path.into()),
                "its parent is not a table or array".into(),
            ))
        }
    }
    Ok(())
}

/// A field path as the errors write it: `body.1.velocity` → `body[1].velocity`.
fn normalized(path: &str) -> String {
    let mut out = String::new();
    for seg in path_segments(path) {
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// The last override that set `field` or a table or array holding it (the one whose value is
/// at fault for an error at `field`).
pub(super) fn setting<'a>(overrides: &'a [String], field: &str) -> Option<&'a str> {
    overrides.iter().rev().map(String::as_str).find(|o| {
        o.split_once('=')
            .is_some_and(|(path, _)| super::locate::path_within(field, &normalized(path.trim())))
    })
}
