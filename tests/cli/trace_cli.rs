//! `supple run --trace`: a Chrome trace event document with one GPU event per node of every
//! graph run in every frame, whose durations add up to the GPU time measured by whole-graph
//! timestamps in the same run.
use std::collections::BTreeMap;
use std::process::Command;

mod common;
use common::TINY;

const GPU_NODES: u64 = 1;
const GPU_GRAPHS: u64 = 2;
const HOST: u64 = 3;

fn num(v: &serde_json::Value, what: &str) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

#[test]
fn run_trace_has_one_event_per_node_per_frame_summing_to_the_gpu_step_time() {
    let dir = std::env::temp_dir().join(format!("supple-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    let trace_path = dir.join("trace.json");
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(["run", scene.to_str().unwrap(), "--out"])
        .arg(&dir)
        .arg("--trace")
        .arg(&trace_path)
        .output()
        .expect("run supple");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace_path).expect("trace written"))
            .expect("the trace is JSON");
    let events = doc["traceEvents"]
        .as_array()
        .expect("a Chrome trace object has a traceEvents array");
    // Chrome trace format: every event names itself, has a phase, pid and tid; complete
    // events have a start and a non-negative duration in microseconds.
    for e in events {
        assert!(e["name"].is_string(), "{e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
        match e["ph"].as_str() {
            Some("X") => {
                assert!(num(&e["ts"], "ts") >= 0.0, "{e}");
                assert!(num(&e["dur"], "dur") >= 0.0, "{e}");
            }
            Some("M") => {}
            other => panic!("unexpected phase {other:?} in {e}"),
        }
    }
    let complete = |tid: u64| -> Vec<&serde_json::Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == tid)
            .collect()
    };
    let (nodes, graphs, host) = (complete(GPU_NODES), complete(GPU_GRAPHS), complete(HOST));

    // One event per node of every graph run: the per-run node events match the graph's count.
    let mut per_run: BTreeMap<u64, usize> = BTreeMap::new();
    for n in &nodes {
        *per_run
            .entry(n["args"]["run"].as_u64().unwrap())
            .or_default() += 1;
        assert!(!n["name"].as_str().unwrap().is_empty());
    }
    assert!(!graphs.is_empty());
    for g in &graphs {
        let run = g["args"]["run"].as_u64().unwrap();
        let expected = g["args"]["nodes"].as_u64().unwrap() as usize;
        assert!(expected > 0, "graph {} traced without its nodes", g["name"]);
        assert_eq!(per_run.get(&run).copied().unwrap_or(0), expected, "{g}");
    }
    let distinct: std::collections::BTreeSet<&str> =
        graphs.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert!(distinct.len() >= 3, "{distinct:?}");

    // Per frame: the node durations add up to the whole-graph GPU time (within 10 %), both
    // over all graph runs of the frame (trace alone) and over the solver's graphs compared
    // with the GPU milliseconds report.json measured with whole-graph timestamps.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let frames = report["frames"].as_array().unwrap();
    // Frame 0 is the initial state; frame k + 1 is what step k (trace `step` k) produced.
    assert_eq!(frames.len(), 4);
    for (k, frame) in frames.iter().skip(1).enumerate() {
        let in_step = |e: &&&serde_json::Value| e["args"]["step"].as_u64() == Some(k as u64);
        let node_us: f64 = nodes
            .iter()
            .filter(in_step)
            .map(|e| num(&e["dur"], "dur"))
            .sum();
        let graph_us: f64 = graphs
            .iter()
            .filter(in_step)
            .map(|e| num(&e["dur"], "dur"))
            .sum();
        assert!(node_us > 0.0 && graph_us > 0.0, "frame {k}");
        assert!(
            (node_us - graph_us).abs() <= 0.1 * graph_us,
            "frame {k}: nodes {node_us} µs vs graphs {graph_us} µs"
        );
        let solver_node_us: f64 = nodes
            .iter()
            .filter(in_step)
            .filter(|e| {
                !e["args"]["graph"]
                    .as_str()
                    .unwrap()
                    .starts_with("sim.readback")
            })
            .map(|e| num(&e["dur"], "dur"))
            .sum();
        let gpu = &frame["gpu_ms"];
        let reported_us: f64 = 1e3
            * [
                "predict",
                "evaluate",
                "hessian",
                "pcg",
                "line_search",
                "finish",
                "device_loop",
            ]
            .iter()
            .map(|p| num(&gpu[*p], p))
            .sum::<f64>();
        assert!(
            (solver_node_us - reported_us).abs() <= 0.1 * reported_us,
            "frame {k}: nodes {solver_node_us} µs vs report.json {reported_us} µs"
        );
    }

    // Host spans on their own track: one per frame step, recording, submission, host waits
    // (named by what they waited for), readback and export.
    let cats: std::collections::BTreeSet<&str> =
        host.iter().map(|e| e["cat"].as_str().unwrap()).collect();
    for c in ["step", "record", "submit", "wait", "readback", "export"] {
        assert!(cats.contains(c), "no host span of category {c}: {cats:?}");
    }
    assert_eq!(host.iter().filter(|e| e["cat"] == "step").count(), 3);
    let waits: Vec<&str> = host
        .iter()
        .filter(|e| e["cat"] == "wait")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        waits.len() >= 3 && waits.iter().all(|w| w.len() > 5 && w.starts_with("wait ")),
        "wait spans: {waits:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
