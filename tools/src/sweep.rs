//! `supple sweep SPEC.toml`: a parameter sweep as a manifest of `supple run` processes.
//!
//! The spec names a scene, base overrides and a grid and/or list of `--set` overrides. Every
//! entry is checked (the scene is parsed with its overrides) and written to
//! `OUT/manifest.jsonl`, one JSON object a line: `index`, `overrides`, `out`, `scene`,
//! `scene_hash` (FNV-1a 64 of the resolved scene) and `args` (the `supple run` arguments).
//! Entries run as child processes in a local pool (`--jobs N`) or one per call (`--index I`,
//! e.g. a Slurm job array); a finished entry (its `report.json`, which a run writes last, is
//! there, has no `error`, and its `sweep_entry.json` has the same scene hash) is skipped.
//! `supple sweep collect` merges the reports into `OUT/results.csv` and `OUT/results.json`.
//! `examples/sweep_ray.py` runs the same manifest on Ray.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use supple::scene::Scene;

/// At most this many entries in one sweep.
const MAX_ENTRIES: usize = 100_000;

/// Options of `supple sweep`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// Sweep spec (TOML: scene, frames, set, [grid], [[list]]; see docs/guide.md).
    #[arg(required = true)]
    spec: Option<PathBuf>,
    /// Run this many entries at once (local process pool).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: u32,
    /// Run only entry I (e.g. --index $SLURM_ARRAY_TASK_ID).
    #[arg(long, value_name = "I")]
    index: Option<usize>,
    /// Sweep folder (overrides the spec's `out`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the manifest and list the entries without running them.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, clap::Subcommand)]
enum SweepCommand {
    /// Merge the entries' report.json files into OUT/results.csv and OUT/results.json.
    Collect {
        /// The sweep spec, or the sweep folder holding manifest.jsonl.
        target: PathBuf,
        /// Sweep folder (overrides the spec's `out`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// A failure with its exit code (2 for bad input, 1 otherwise) and message.
pub type SweepError = (i32, String);

/// The spec file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    /// Scene file, relative to the spec (default: the embedded default scene).
    scene: Option<PathBuf>,
    /// Sweep folder, relative to the working folder (default: `sweeps/<spec name>`).
    out: Option<PathBuf>,
    /// `--frames` for every run.
    frames: Option<u32>,
    /// `--export` for every run.
    export: Option<String>,
    /// Overrides applied to every entry (before the entry's own).
    #[serde(default)]
    set: Vec<String>,
    /// Axes of a Cartesian product: path = [values].
    #[serde(default)]
    grid: toml::Table,
    /// Explicit entries: path = value tables.
    #[serde(default)]
    list: Vec<toml::Table>,
}

/// One line of `manifest.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Position in the manifest.
    pub index: usize,
    /// The entry's own overrides (`path=value`).
    pub overrides: Vec<String>,
    /// Its run folder.
    pub out: PathBuf,
    /// The scene file (null: the default scene).
    pub scene: Option<PathBuf>,
    /// `fnv1a64:` hash of the resolved scene (with every override, frames and export).
    pub scene_hash: String,
    /// Arguments of `supple run` for this entry.
    pub args: Vec<String>,
}

/// FNV-1a 64-bit hash of `bytes`, as `fnv1a64:` and 16 hex digits.
fn fnv1a64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// `path=value` with the value in TOML syntax (as `--set` reads it).
fn override_text(path: &str, value: &toml::Value) -> String {
    format!("{path}={value}")
}

/// The grid's axes: `path = [values]`, nested tables (`a.b = [...]` unquoted) joined into
/// dotted paths.
fn grid_axes(
    table: &toml::Table,
    prefix: &str,
    name: &str,
    axes: &mut Vec<(String, Vec<toml::Value>)>,
) -> Result<(), SweepError> {
    for (key, values) in table {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match values {
            toml::Value::Table(t) => grid_axes(t, &path, name, axes)?,
            toml::Value::Array(a) if !a.is_empty() => axes.push((path, a.clone())),
            _ => {
                return Err((
                    2,
                    format!("{name}: grid.\"{path}\": must be a non-empty array of values"),
                ))
            }
        }
    }
    Ok(())
}

/// The entries' own overrides: every list entry (or one empty entry) times every grid point
/// (axes in the alphabetical order of their paths, the last varying fastest).
fn expand(spec: &Spec, name: &str) -> Result<Vec<Vec<String>>, SweepError> {
    let mut axes: Vec<(String, Vec<toml::Value>)> = Vec::new();
    grid_axes(&spec.grid, "", name, &mut axes)?;
    let points = axes
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))
        .filter(|&n| n.saturating_mul(spec.list.len().max(1)) <= MAX_ENTRIES)
        .ok_or_else(|| (2, format!("{name}: more than {MAX_ENTRIES} entries")))?;
    let lists: Vec<Vec<String>> = if spec.list.is_empty() {
        vec![Vec::new()]
    } else {
        spec.list
            .iter()
            .map(|t| t.iter().map(|(p, v)| override_text(p, v)).collect())
            .collect()
    };
    let mut out = Vec::new();
    for base in &lists {
        for mut k in 0..points {
            let mut sets = vec![String::new(); axes.len()];
            for (a, (path, values)) in axes.iter().enumerate().rev() {
                sets[a] = override_text(path, &values[k % values.len()]);
                k /= values.len();
            }
            out.push(base.iter().cloned().chain(sets).collect());
        }
    }
    Ok(out)
}

/// A parsed spec, its entries and its folder.
pub struct Sweep {
    /// Sweep folder.
    pub out: PathBuf,
    /// The manifest entries.
    pub entries: Vec<Entry>,
}

/// Reads `spec_path` and checks every entry's scene (exit 2 naming the entry on failure).
pub fn plan(spec_path: &Path, out_override: Option<&Path>) -> Result<Sweep, SweepError> {
    let name = spec_path.display().to_string();
    let text =
        std::fs::read_to_string(spec_path).map_err(|e| (2, format!("{name}: cannot read: {e}")))?;
    let spec: Spec = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| {
                format!(
                    ":{}",
                    text[..s.start.min(text.len())].lines().count().max(1)
                )
            })
            .unwrap_or_default();
        (2, format!("{name}{line}: {}", e.message().trim()))
    })?;
    if let Some(e) = &spec.export {
        if !["obj", "ply", "usd", "vtu", "html"].contains(&e.as_str()) {
            return Err((
                2,
                format!("{name}: export: \"{e}\" is not one of obj, ply, usd, vtu, html"),
            ));
        }
    }
    let base = spec_path.parent().unwrap_or(Path::new(""));
    let scene = spec
        .scene
        .as_ref()
        .map(|s| absolute(&base.join(s)))
        .transpose()?;
    let stem = spec_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    let out = match (out_override, &spec.out) {
        (Some(o), _) => o.to_path_buf(),
        (None, Some(o)) => o.clone(),
        (None, None) => Path::new("sweeps").join(stem),
    };
    let out = absolute(&out)?;
    let mut entries = Vec::new();
    for (index, own) in expand(&spec, &name)?.into_iter().enumerate() {
        let mut sets: Vec<String> = spec.set.iter().chain(&own).cloned().collect();
        let mut args = vec!["run".to_string()];
        if let Some(s) = &scene {
            args.push(s.display().to_string());
        }
        let run_dir = out.join("runs").join(format!("{index:04}"));
        args.extend(["--out".into(), run_dir.display().to_string()]);
        if let Some(f) = spec.frames {
            args.extend(["--frames".into(), f.to_string()]);
            sets.push(format!("simulation.frames={f}"));
        }
        if let Some(e) = &spec.export {
            args.extend(["--export".into(), e.clone()]);
            if e != "html" {
                sets.push(format!("output.export=\"{e}\""));
            }
        }
        for s in spec.set.iter().chain(&own) {
            args.extend(["--set".into(), s.clone()]);
        }
        let resolved = match &scene {
            Some(p) => Scene::load(p, &sets),
            None => Scene::parse(crate::cmd_run::DEFAULT_SCENE, "default scene", &sets),
        }
        .map_err(|e| (2, format!("{name}: entry {index} ({}): {e}", own.join(" "))))?;
        let canonical = serde_json::to_string(&resolved).map_err(|e| (1, e.to_string()))?;
        entries.push(Entry {
            index,
            overrides: own,
            out: run_dir,
            scene: scene.clone(),
            scene_hash: fnv1a64(canonical.as_bytes()),
            args,
        });
    }
    Ok(Sweep { out, entries })
}

fn absolute(p: &Path) -> Result<PathBuf, SweepError> {
    std::path::absolute(p).map_err(|e| (2, format!("{}: {e}", p.display())))
}

/// Writes `path` through a temporary file and a rename (concurrent `--index` calls may write
/// the same manifest).
fn write_atomic(path: &Path, text: &str) -> Result<(), SweepError> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| (1, format!("{}: {e}", path.display())))
}

fn write_manifest(sweep: &Sweep) -> Result<PathBuf, SweepError> {
    std::fs::create_dir_all(&sweep.out)
        .map_err(|e| (1, format!("{}: {e}", sweep.out.display())))?;
    let mut text = String::new();
    for e in &sweep.entries {
        text.push_str(&serde_json::to_string(e).map_err(|e| (1, e.to_string()))?);
        text.push('\n');
    }
    let path = sweep.out.join("manifest.jsonl");
    write_atomic(&path, &text)?;
    Ok(path)
}

/// Whether `entry` finished: its report.json parses, has no `error`, and its sweep_entry.json
/// has the entry's scene hash.
pub fn finished(entry: &Entry) -> bool {
    let read = |name: &str| -> Option<Value> {
        serde_json::from_str(&std::fs::read_to_string(entry.out.join(name)).ok()?).ok()
    };
    let Some(report) = read("report.json") else {
        return false;
    };
    let ok = report.is_object() && report.get("error").is_none_or(Value::is_null);
    let same = read("sweep_entry.json")
        .and_then(|m| m.get("scene_hash").cloned())
        .is_some_and(|h| h == entry.scene_hash.as_str());
    ok && same
}

/// Runs one entry as a `supple run` child (output in its run.log); the exit code.
/// The Python interpreter running this command line when it is the Python package's `supple`
/// (its `cli.py` sets `SUPPLE_SELF_PYTHON`): entries then run as `PYTHON -m supple run …`.
fn self_python() -> Option<std::path::PathBuf> {
    std::env::var_os("SUPPLE_SELF_PYTHON")
        .filter(|p| !p.is_empty())
        .map(Into::into)
}

fn run_entry(exe: &Path, entry: &Entry) -> Result<i32, String> {
    let dir = &entry.out;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // A stale or failed report must not count as finished if this run dies.
    match std::fs::remove_file(dir.join("report.json")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", dir.join("report.json").display()))
        }
        _ => {}
    }
    let meta = serde_json::to_string_pretty(entry).map_err(|e| e.to_string())?;
    write_atomic(&dir.join("sweep_entry.json"), &meta).map_err(|(_, m)| m)?;
    let log_path = dir.join("run.log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let err = log
        .try_clone()
        .map_err(|e| format!("{}: {e}", log_path.display()))?;
    let mut command = std::process::Command::new(exe);
    if self_python().is_some() {
        // The `supple` command of the Python package: this interpreter runs `-m supple`.
        command.args(["-m", "supple"]);
    }
    let status = command
        .args(&entry.args)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(err)
        .status()
        .map_err(|e| format!("{}: cannot start: {e}", exe.display()))?;
    Ok(status.code().unwrap_or(-1))
}

/// Runs `todo` (indices into `entries`) with `jobs` workers; the failed entries' messages.
fn run_pool(entries: &[Entry], todo: &[usize], jobs: usize) -> Result<Vec<String>, SweepError> {
    let exe = match self_python() {
        Some(python) => python,
        None => std::env::current_exe().map_err(|e| (1, format!("cannot find supple: {e}")))?,
    };
    let next = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(todo.len()).max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                let Some(&i) = todo.get(k) else { break };
                let e = &entries[i];
                let t0 = Instant::now();
                let result = run_entry(&exe, e);
                let secs = t0.elapsed().as_secs_f64();
                let line = match result {
                    Ok(0) if finished(e) => {
                        eprintln!("[sweep] entry {i} done in {secs:.1} s");
                        None
                    }
                    Ok(0) => Some(format!(
                        "entry {i}: exited 0 without a complete report.json (see {})",
                        e.out.join("run.log").display()
                    )),
                    Ok(code) => Some(format!(
                        "entry {i}: supple run exited with {code} (see {})",
                        e.out.join("run.log").display()
                    )),
                    Err(m) => Some(format!("entry {i}: {m}")),
                };
                if let Some(l) = line {
                    eprintln!("[sweep] {l}");
                    if let Ok(mut f) = failed.lock() {
                        f.push(l);
                    }
                }
            });
        }
    });
    failed
        .into_inner()
        .map_err(|_| (1, "a sweep worker panicked".to_string()))
}

/// `supple sweep` (run) and `supple sweep collect`.
pub fn run(args: &Args) -> Result<(), SweepError> {
    if let Some(SweepCommand::Collect { target, out }) = &args.command {
        return collect(target, out.as_deref());
    }
    let spec = args
        .spec
        .as_ref()
        .ok_or((2, "a sweep spec (SPEC.toml) is required".to_string()))?;
    let sweep = plan(spec, args.out.as_deref())?;
    let manifest = write_manifest(&sweep)?;
    let n = sweep.entries.len();
    if let Some(i) = args.index {
        if i >= n {
            return Err((
                2,
                format!(
                    "--index {i}: the sweep has {n} entries (0 to {})",
                    n.saturating_sub(1)
                ),
            ));
        }
    }
    let selected: Vec<usize> = match args.index {
        Some(i) => vec![i],
        None => (0..n).collect(),
    };
    let todo: Vec<usize> = selected
        .iter()
        .copied()
        .filter(|&i| !finished(&sweep.entries[i]))
        .collect();
    eprintln!(
        "[sweep] {}: {n} entries; {} selected, {} already done, {} to run{}",
        manifest.display(),
        selected.len(),
        selected.len() - todo.len(),
        todo.len(),
        if args.dry_run { " (dry run)" } else { "" }
    );
    if args.dry_run {
        for e in &sweep.entries {
            println!(
                "{}\t{}\t{}",
                e.index,
                e.out.display(),
                e.overrides.join(" ")
            );
        }
        return Ok(());
    }
    let failed = run_pool(&sweep.entries, &todo, args.jobs as usize)?;
    if failed.is_empty() {
        eprintln!(
            "[sweep] all selected entries done; merge them with `supple sweep collect {}`",
            sweep.out.display()
        );
        Ok(())
    } else {
        Err((
            1,
            format!("{} entries failed: {}", failed.len(), failed.join("; ")),
        ))
    }
}

/// Reads `dir/manifest.jsonl`.
fn read_manifest(dir: &Path) -> Result<Vec<Entry>, SweepError> {
    let path = dir.join("manifest.jsonl");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| (2, format!("{}: cannot read: {e}", path.display())))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(k, l)| {
            serde_json::from_str(l).map_err(|e| (2, format!("{}:{}: {e}", path.display(), k + 1)))
        })
        .collect()
}

/// One row of the merged table: the entry, its overrides and the report's summary.
fn row(e: &Entry, paths: &[String]) -> serde_json::Map<String, Value> {
    let mut r = serde_json::Map::new();
    r.insert("index".into(), e.index.into());
    let report: Option<Value> = std::fs::read_to_string(e.out.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let status = match &report {
        Some(v) if !finished(e) && v.get("error").is_some_and(|x| !x.is_null()) => "error",
        Some(_) if finished(e) => "done",
        Some(_) => "stale",
        None => "missing",
    };
    r.insert("status".into(), status.into());
    for p in paths {
        let v = e
            .overrides
            .iter()
            .find_map(|o| o.split_once('=').filter(|(k, _)| k == p).map(|(_, v)| v))
            .map_or(Value::Null, |v| Value::String(v.to_string()));
        r.insert(p.clone(), v);
    }
    r.insert("scene_hash".into(), e.scene_hash.clone().into());
    r.insert("out".into(), e.out.display().to_string().into());
    let Some(Value::Object(rep)) = report else {
        return r;
    };
    for (k, v) in &rep {
        if !v.is_array() && !v.is_object() {
            r.insert(k.clone(), v.clone());
        }
    }
    let frames = rep.get("frames").and_then(Value::as_array);
    let frames = frames.map(Vec::as_slice).unwrap_or_default();
    let nums = |key: &'static str| frames.iter().filter_map(move |f| f.get(key)?.as_f64());
    // Frames stepped: report.json's frames[0] is the initial state (no statistics).
    let stepped = frames.iter().filter(|f| f.get("wall_ms").is_some()).count();
    r.insert("frames".into(), stepped.into());
    let sum = |key: &'static str| nums(key).sum::<f64>();
    r.insert(
        "newton_iterations_total".into(),
        sum("newton_iterations").into(),
    );
    r.insert("pcg_iterations_total".into(), sum("pcg_iterations").into());
    r.insert("wall_ms_total".into(), sum("wall_ms").into());
    let opt = |x: Option<f64>| x.map_or(Value::Null, Value::from);
    r.insert(
        "min_volume_ratio_min".into(),
        opt(nums("min_volume_ratio").reduce(f64::min)),
    );
    r.insert(
        "max_speed_max".into(),
        opt(nums("max_speed").reduce(f64::max)),
    );
    r.insert("energy_last".into(), opt(nums("energy").next_back()));
    r
}

fn csv_field(v: &Value) -> String {
    let s = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// `supple sweep collect`: merges the reports into `results.csv` and `results.json`.
fn collect(target: &Path, out: Option<&Path>) -> Result<(), SweepError> {
    let dir = match out {
        Some(o) => o.to_path_buf(),
        None if target.is_dir() => target.to_path_buf(),
        None => plan(target, None)?.out,
    };
    let entries = read_manifest(&dir)?;
    let mut paths: Vec<String> = Vec::new();
    for e in &entries {
        for o in &e.overrides {
            let p = o.split_once('=').map_or(o.as_str(), |(k, _)| k).to_string();
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    let rows: Vec<_> = entries.iter().map(|e| row(e, &paths)).collect();
    let mut columns: Vec<String> = Vec::new();
    for r in &rows {
        for k in r.keys() {
            if !columns.contains(k) {
                columns.push(k.clone());
            }
        }
    }
    let mut csv = columns
        .iter()
        .map(|c| csv_field(&Value::String(c.clone())))
        .collect::<Vec<_>>()
        .join(",");
    csv.push('\n');
    for r in &rows {
        let line: Vec<String> = columns
            .iter()
            .map(|c| csv_field(r.get(c).unwrap_or(&Value::Null)))
            .collect();
        csv.push_str(&line.join(","));
        csv.push('\n');
    }
    let json = serde_json::to_string_pretty(&rows).map_err(|e| (1, e.to_string()))?;
    write_atomic(&dir.join("results.csv"), &csv)?;
    write_atomic(&dir.join("results.json"), &json)?;
    let done = rows.iter().filter(|r| r["status"] == "done").count();
    println!(
        "wrote {} and {}: {} entries, {done} done, {} not",
        dir.join("results.csv").display(),
        dir.join("results.json").display(),
        rows.len(),
        rows.len() - done
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Spec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn grid_times_list_in_order() {
        let s = spec(
            r#"
            [grid]
            "b.y" = [1, 2]
            "a.x" = [0.5, 1e5, "s"]
            d.e = [3]
            [[list]]
            "c" = true
            [[list]]
            "c" = false
            "#,
        );
        let e = expand(&s, "spec").unwrap();
        assert_eq!(e.len(), 12);
        assert_eq!(e[0], ["c=true", "a.x=0.5", "b.y=1", "d.e=3"]);
        assert_eq!(e[1], ["c=true", "a.x=0.5", "b.y=2", "d.e=3"]);
        assert_eq!(e[2], ["c=true", "a.x=100000.0", "b.y=1", "d.e=3"]);
        assert_eq!(e[5], ["c=true", "a.x=\"s\"", "b.y=2", "d.e=3"]);
        assert_eq!(e[6], ["c=false", "a.x=0.5", "b.y=1", "d.e=3"]);
    }

    #[test]
    fn empty_axes_and_huge_grids_are_refused() {
        let e = expand(&spec("[grid]\n\"a\" = []\n"), "s.toml").unwrap_err();
        assert_eq!(e.0, 2);
        assert!(e.1.contains("grid.\"a\""), "{}", e.1);
        let big = (0..6)
            .map(|k| format!("\"p{k}\" = [{}]\n", ["1"; 10].join(",")))
            .collect::<String>();
        let e = expand(&spec(&format!("[grid]\n{big}")), "s.toml").unwrap_err();
        assert!(e.1.contains("more than"), "{}", e.1);
    }

    #[test]
    fn no_grid_and_no_list_is_one_entry() {
        assert_eq!(expand(&spec(""), "s").unwrap(), vec![Vec::<String>::new()]);
    }

    #[test]
    fn fnv1a64_reference_values() {
        assert_eq!(fnv1a64(b""), "fnv1a64:cbf29ce484222325");
        assert_eq!(fnv1a64(b"a"), "fnv1a64:af63dc4c8601ec8c");
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field(&Value::from("a,b")), "\"a,b\"");
        assert_eq!(csv_field(&Value::from("say \"x\"")), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field(&Value::from(1.5)), "1.5");
        assert_eq!(csv_field(&Value::Null), "");
    }
}
