//! Tracing: per-node GPU times of every compiled-graph run and host-side spans, collected on a
//! [`Context`] and written in the Chrome trace event format (opens in Perfetto and
//! `chrome://tracing`).
//!
//! Turn it on with [`Context::start_trace`] *before* compiling the graphs to be traced: from then
//! on [`super::Graph::compile`] records per-node timestamps in every graph (as if
//! [`super::CompileOptions::timestamps`] were set), each completed [`super::CompiledGraph`] run
//! appends a [`GraphRun`], and graph compilation and submission add [`HostSpan`]s. Callers add
//! their own host spans (readback, export) with [`Context::trace_host_span`].
//! [`Context::take_trace`] returns what was collected; [`Trace::to_chrome_json`] formats it.
//!
//! Per-node timestamps make some drivers (lavapipe) flush after every node, which inflates GPU
//! times: compare node times with the whole-graph times of the same traced run, not with an
//! untraced run.

use std::time::Instant;

/// GPU time of one node within one graph run, in nanoseconds from the run's start timestamp.
///
/// `start_ns`/`end_ns` are the timestamps written right before and after the node's command;
/// `ready_ns` is when the node before it (in execution order) ended, or the graph's start for
/// the first node. The span `ready_ns..end_ns` is the time the node added to the graph: its
/// command plus the barrier, launch and timestamp overhead in front of it. These spans tile
/// the graph, so their durations add up to the whole-graph time less the tail after the last
/// node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpan {
    /// Node name.
    pub name: String,
    /// Kernel name for dispatches, `fill`/`copy` otherwise.
    pub kernel: String,
    /// Workgroup size the dispatch ran with (0 for fill and copy nodes).
    pub workgroup_size: u32,
    /// When the previous node ended (the graph's start for the first node).
    pub ready_ns: f64,
    /// Timestamp before the node's command.
    pub start_ns: f64,
    /// Timestamp after the node's command.
    pub end_ns: f64,
}

/// One completed run of a compiled graph.
#[derive(Debug, Clone)]
pub struct GraphRun {
    /// Graph name.
    pub graph: String,
    /// When the host submitted the run.
    pub submitted: Instant,
    /// When the host saw the run complete.
    pub completed: Instant,
    /// GPU nanoseconds between the whole-graph timestamps (start and end of the graph).
    pub gpu_total_ns: f64,
    /// Every node of the graph in recording order (empty when the graph was compiled before
    /// tracing started, without per-node timestamps).
    pub nodes: Vec<NodeSpan>,
}

/// A span of host work (graph recording, submission, readback, export, a whole step).
#[derive(Debug, Clone)]
pub struct HostSpan {
    /// What was done, e.g. `record sim.readback`.
    pub name: String,
    /// Category: `record`, `submit`, `wait` (a host wait, named by what it waited for),
    /// `readback`, `export`, `step`, or a caller's own.
    pub category: String,
    /// Start.
    pub start: Instant,
    /// End.
    pub end: Instant,
}

/// Everything collected since [`Context::start_trace`].
#[derive(Debug, Clone)]
pub struct Trace {
    /// When tracing started (the origin of the trace's time axis).
    pub origin: Instant,
    /// Completed graph runs, in completion order.
    pub graph_runs: Vec<GraphRun>,
    /// Host spans, in the order they were added.
    pub host_spans: Vec<HostSpan>,
}

/// Thread (track) ids of the Chrome trace written by [`Trace::to_chrome_json`].
pub mod tracks {
    /// GPU nodes: one complete event per node per graph run.
    pub const GPU_NODES: u32 = 1;
    /// GPU graphs: one complete event per graph run (whole-graph timestamps).
    pub const GPU_GRAPHS: u32 = 2;
    /// Host spans: recording, submission, readback, export, steps.
    pub const HOST: u32 = 3;
}

impl Trace {
    /// The index of the step (in `steps`, as host `(start, end)` spans, ascending) whose span
    /// contains `t`; `None` outside every step.
    fn step_of(steps: &[(Instant, Instant)], t: Instant) -> Option<usize> {
        steps.iter().position(|(s, e)| *s <= t && t <= *e)
    }

    /// The trace as a Chrome trace event document (`{"traceEvents": [...]}`): complete events
    /// (`"ph": "X"`, `ts`/`dur` in microseconds from [`Trace::origin`]) on three tracks of
    /// process 1 ([`tracks`]), plus thread-name metadata events.
    ///
    /// A node's event spans [`NodeSpan::ready_ns`] to [`NodeSpan::end_ns`] (the node's share of
    /// the graph, overhead before it included); its `args` hold `workgroup_size`, `kernel_us` (between the
    /// timestamps around the command alone) and `overhead_us` (the rest). A graph's event
    /// spans its whole-graph timestamps.
    ///
    /// GPU events are placed on the host's time axis at their run's submission time, offset by
    /// their GPU timestamps relative to the graph's start (queue latency is not shown). `steps`
    /// are host spans of the caller's steps (frames); every GPU and host event whose start
    /// falls inside one gets `"step": index` in its `args`, and each step also becomes a host
    /// event named `step N`.
    pub fn to_chrome_json(&self, steps: &[(Instant, Instant)]) -> serde_json::Value {
        use serde_json::json;
        let us = |t: Instant| t.saturating_duration_since(self.origin).as_secs_f64() * 1e6;
        let mut events = vec![
            json!({"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
                   "args": {"name": "supple"}}),
            json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tracks::GPU_NODES,
                   "args": {"name": "GPU nodes"}}),
            json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tracks::GPU_GRAPHS,
                   "args": {"name": "GPU graphs"}}),
            json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tracks::HOST,
                   "args": {"name": "host"}}),
        ];
        for (k, (s, e)) in steps.iter().enumerate() {
            events.push(json!({
                "name": format!("step {k}"), "cat": "step", "ph": "X", "pid": 1,
                "tid": tracks::HOST, "ts": us(*s), "dur": us(*e) - us(*s),
                "args": {"step": k}
            }));
        }
        for (run, r) in self.graph_runs.iter().enumerate() {
            let base = us(r.submitted);
            let step = Self::step_of(steps, r.submitted);
            events.push(json!({
                "name": r.graph, "cat": "gpu.graph", "ph": "X", "pid": 1,
                "tid": tracks::GPU_GRAPHS, "ts": base, "dur": r.gpu_total_ns * 1e-3,
                "args": {"step": step, "run": run, "nodes": r.nodes.len()}
            }));
            for n in &r.nodes {
                events.push(json!({
                    "name": n.name, "cat": "gpu.node", "ph": "X", "pid": 1,
                    "tid": tracks::GPU_NODES, "ts": base + n.ready_ns * 1e-3,
                    "dur": (n.end_ns - n.ready_ns).max(0.0) * 1e-3,
                    "args": {"step": step, "run": run, "graph": r.graph, "kernel": n.kernel,
                             "workgroup_size": n.workgroup_size,
                             "kernel_us": (n.end_ns - n.start_ns).max(0.0) * 1e-3,
                             "overhead_us": (n.start_ns - n.ready_ns).max(0.0) * 1e-3}
                }));
            }
        }
        for h in &self.host_spans {
            events.push(json!({
                "name": h.name, "cat": h.category, "ph": "X", "pid": 1, "tid": tracks::HOST,
                "ts": us(h.start), "dur": us(h.end) - us(h.start),
                "args": {"step": Self::step_of(steps, h.start)}
            }));
        }
        json!({ "traceEvents": events, "displayTimeUnit": "ms" })
    }
}

/// Collection state kept on the device (behind a mutex in the context).
#[derive(Debug, Default)]
pub(crate) struct TraceState {
    /// `Some` while tracing.
    pub(crate) trace: Option<Trace>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn chrome_json_has_one_event_per_node_and_steps_by_submission_time() {
        let origin = Instant::now();
        let ms = |k: u64| origin + Duration::from_millis(k);
        let run = |g: &str, at: u64| GraphRun {
            graph: g.into(),
            submitted: ms(at),
            completed: ms(at + 1),
            gpu_total_ns: 900_000.0,
            nodes: vec![
                NodeSpan {
                    name: "a".into(),
                    kernel: "k".into(),
                    workgroup_size: 64,
                    ready_ns: 0.0,
                    start_ns: 0.0,
                    end_ns: 400_000.0,
                },
                NodeSpan {
                    name: "b".into(),
                    kernel: "fill".into(),
                    workgroup_size: 0,
                    ready_ns: 400_000.0,
                    start_ns: 500_000.0,
                    end_ns: 900_000.0,
                },
            ],
        };
        let t = Trace {
            origin,
            graph_runs: vec![run("g", 1), run("g", 11), run("h", 30)],
            host_spans: vec![HostSpan {
                name: "readback".into(),
                category: "readback".into(),
                start: ms(5),
                end: ms(6),
            }],
        };
        let v = t.to_chrome_json(&[(ms(0), ms(10)), (ms(10), ms(20))]);
        let ev = v["traceEvents"].as_array().unwrap();
        let nodes: Vec<_> = ev
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == tracks::GPU_NODES)
            .collect();
        assert_eq!(nodes.len(), 6);
        assert_eq!(nodes[1]["name"], "b");
        assert!((nodes[1]["ts"].as_f64().unwrap() - 1400.0).abs() < 1e-6);
        assert!((nodes[1]["dur"].as_f64().unwrap() - 500.0).abs() < 1e-6);
        assert!((nodes[1]["args"]["kernel_us"].as_f64().unwrap() - 400.0).abs() < 1e-6);
        assert!((nodes[1]["args"]["overhead_us"].as_f64().unwrap() - 100.0).abs() < 1e-6);
        assert_eq!(nodes[0]["args"]["step"], 0);
        assert_eq!(nodes[2]["args"]["step"], 1);
        assert!(nodes[4]["args"]["step"].is_null());
        let host: Vec<_> = ev
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == tracks::HOST)
            .collect();
        assert_eq!(host.len(), 3, "two steps and one readback span");
    }
}
