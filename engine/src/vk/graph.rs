//! Command graphs: dispatches, fills and copies recorded as data, each declaring the buffers it
//! reads and writes. [`Graph::compile`] infers the dependencies from those declarations, groups
//! independent nodes into levels with one memory barrier between levels (none between
//! independent nodes), and records a reusable command buffer with per-node timestamps, debug
//! labels and optional crash markers. A compiled graph is submitted many times and rebuilt only
//! when its topology changes.

use super::buffer::{BufferUsage, GpuBuffer, RawBuffer};
use super::context::{Context, Ticket};
use super::error::{VkCheck, VkError, VkResult};
use super::kernel::{KernelId, WorkgroupOverrideUse, PUSH_CONSTANT_BYTES};
use ash::vk;
use bitflags::bitflags;
use bytemuck::Pod;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

bitflags! {
    /// How a node uses a buffer binding.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Access: u8 {
        /// Read by the node.
        const READ = 1;
        /// Written by the node.
        const WRITE = 2;
        /// Read as indirect dispatch arguments.
        const INDIRECT = 4;
    }
}

/// The element format of a binding read through a uniform texel buffer view
/// ([`Dispatch::read_texels`]; GLSL `samplerBuffer`/`usamplerBuffer` with `texelFetch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TexelFormat {
    /// Four f32 per texel (`vec4`).
    Rgba32Float,
    /// Two f32 per texel (`vec2`).
    Rg32Float,
    /// Four u32 per texel (`uvec4`).
    Rgba32Uint,
    /// Two u32 per texel (`uvec2`).
    Rg32Uint,
    /// One u32 per texel.
    R32Uint,
    /// One f32 per texel.
    R32Float,
}

impl TexelFormat {
    /// The Vulkan format of the view.
    pub(crate) fn vk(self) -> vk::Format {
        match self {
            TexelFormat::Rgba32Float => vk::Format::R32G32B32A32_SFLOAT,
            TexelFormat::Rg32Float => vk::Format::R32G32_SFLOAT,
            TexelFormat::Rgba32Uint => vk::Format::R32G32B32A32_UINT,
            TexelFormat::Rg32Uint => vk::Format::R32G32_UINT,
            TexelFormat::R32Uint => vk::Format::R32_UINT,
            TexelFormat::R32Float => vk::Format::R32_SFLOAT,
        }
    }

    /// Bytes per texel.
    pub(crate) fn bytes(self) -> u64 {
        match self {
            TexelFormat::Rgba32Float | TexelFormat::Rgba32Uint => 16,
            TexelFormat::Rg32Float | TexelFormat::Rg32Uint => 8,
            TexelFormat::R32Uint | TexelFormat::R32Float => 4,
        }
    }
}

/// One binding slot of a dispatch: the range, how the node uses it, and (for a read through
/// a uniform texel buffer view) the texel format.
#[derive(Clone)]
pub(super) struct Binding {
    pub(super) slice: BufferSlice,
    pub(super) access: Access,
    pub(super) texel: Option<TexelFormat>,
}

/// A byte range of a buffer, as bound by a node.
#[derive(Clone)]
pub struct BufferSlice {
    pub(crate) raw: Arc<RawBuffer>,
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

impl BufferSlice {
    fn end(&self) -> u64 {
        self.offset + self.size
    }
    fn overlaps(&self, o: &BufferSlice) -> bool {
        self.raw.id == o.raw.id && self.offset < o.end() && o.offset < self.end()
    }
}

impl<T: Pod> From<&GpuBuffer<T>> for BufferSlice {
    fn from(b: &GpuBuffer<T>) -> Self {
        let size = b.raw.size;
        BufferSlice {
            raw: Arc::clone(&b.raw),
            offset: 0,
            size,
        }
    }
}

impl<T: Pod> GpuBuffer<T> {
    /// Elements `range` of this buffer as a binding (offset must meet the device's
    /// minStorageBufferOffsetAlignment; checked at compile time).
    pub fn slice(&self, range: std::ops::Range<usize>) -> BufferSlice {
        let e = std::mem::size_of::<T>() as u64;
        BufferSlice {
            raw: Arc::clone(&self.raw),
            offset: range.start as u64 * e,
            size: (range.len() as u64 * e).max(4),
        }
    }
}

/// How many workgroups a dispatch launches.
#[derive(Clone)]
pub enum Groups {
    /// A fixed count.
    Direct([u32; 3]),
    /// Read from a buffer (`VkDispatchIndirectCommand`, three u32) written by an earlier node.
    Indirect(BufferSlice),
}

/// A compute dispatch: kernel, launch size, specialization, bindings and push constants.
#[derive(Clone)]
pub struct Dispatch {
    pub(super) name: String,
    pub(super) kernel: KernelId,
    pub(super) groups: Groups,
    pub(super) workgroup_size: u32,
    pub(super) spec: Vec<u32>,
    pub(super) bindings: Vec<Binding>,
    pub(super) push: Vec<u8>,
    /// The predicate word (VK_EXT_conditional_rendering): the dispatch runs only while the
    /// first u32 of this range is non-zero ([`Dispatch::only_if`]).
    pub(super) condition: Option<BufferSlice>,
}

impl Dispatch {
    /// A dispatch of `groups` workgroups of `kernel` (workgroup size 64 unless set).
    pub fn new(name: impl Into<String>, kernel: KernelId, groups: [u32; 3]) -> Self {
        Dispatch {
            name: name.into(),
            kernel,
            groups: Groups::Direct(groups),
            workgroup_size: 64,
            spec: Vec::new(),
            bindings: Vec::new(),
            push: Vec::new(),
            condition: None,
        }
    }

    /// An indirect dispatch whose workgroup counts are read from `args` at execution time.
    pub fn indirect(
        name: impl Into<String>,
        kernel: KernelId,
        args: impl Into<BufferSlice>,
    ) -> Self {
        let mut d = Dispatch::new(name, kernel, [0, 0, 0]);
        d.groups = Groups::Indirect(args.into());
        d
    }

    /// Sets the workgroup size (specialization constant 0).
    pub fn workgroup_size(mut self, n: u32) -> Self {
        self.workgroup_size = n;
        self
    }

    /// Sets specialization constants 1.. (after the workgroup size).
    pub fn spec(mut self, values: &[u32]) -> Self {
        self.spec = values.to_vec();
        self
    }

    /// Binds the next binding slot, read-only.
    pub fn read(self, b: impl Into<BufferSlice>) -> Self {
        self.bind(b, Access::READ)
    }

    /// Binds the next binding slot, write-only.
    pub fn write(self, b: impl Into<BufferSlice>) -> Self {
        self.bind(b, Access::WRITE)
    }

    /// Binds the next binding slot, read and written.
    pub fn read_write(self, b: impl Into<BufferSlice>) -> Self {
        self.bind(b, Access::READ | Access::WRITE)
    }

    /// Binds the next binding slot with explicit access.
    pub fn bind(mut self, b: impl Into<BufferSlice>, access: Access) -> Self {
        self.bindings.push(Binding {
            slice: b.into(),
            access,
            texel: None,
        });
        self
    }

    /// Binds the next binding slot, read-only, through a uniform texel buffer view of
    /// `format` (the kernel declares a `samplerBuffer` or `usamplerBuffer` there). The buffer
    /// needs [`BufferUsage::TEXEL`]; the offset must meet minTexelBufferOffsetAlignment and
    /// the texel count maxTexelBufferElements (checked at compile time). Gathers through
    /// texel fetches use the texture path: vectorized on CPU devices (lavapipe), cached on
    /// GPUs.
    pub fn read_texels(mut self, b: impl Into<BufferSlice>, format: TexelFormat) -> Self {
        self.bindings.push(Binding {
            slice: b.into(),
            access: Access::READ,
            texel: Some(format),
        });
        self
    }

    /// Predicates the dispatch on the first u32 of `word` (VK_EXT_conditional_rendering): it
    /// is skipped, not launched, while that word is zero when the dispatch is reached. The word
    /// is a declared read (stage and access of conditional rendering), so the barrier after
    /// the node that writes it follows as for any binding. The buffer needs
    /// [`BufferUsage::CONDITION`], the offset a multiple of 4, and the context
    /// [`Context::conditional_rendering`] (checked at compile time).
    pub fn only_if(mut self, word: impl Into<BufferSlice>) -> Self {
        self.condition = Some(word.into());
        self
    }

    /// Sets the push constants (at most 128 bytes).
    pub fn push<T: Pod>(mut self, value: &T) -> Self {
        self.push = bytemuck::bytes_of(value).to_vec();
        self
    }
}

/// What a node does.
#[derive(Clone)]
pub enum NodeKind {
    /// A compute dispatch.
    Dispatch(Dispatch),
    /// Fills a range with a repeated u32 (clearing persistent workspaces each step).
    Fill {
        /// Destination range.
        dst: BufferSlice,
        /// The value written to every u32.
        value: u32,
    },
    /// Copies `src` into the start of `dst` (`min` of both sizes).
    Copy {
        /// Source range.
        src: BufferSlice,
        /// Destination range.
        dst: BufferSlice,
    },
}

/// One recorded command.
#[derive(Clone)]
pub struct Node {
    /// Name shown in text/DOT dumps, profiles and debug labels.
    pub name: String,
    /// The command.
    pub kind: NodeKind,
}

#[derive(Clone, Copy)]
struct Use {
    stage: vk::PipelineStageFlags2,
    access: vk::AccessFlags2,
    write: bool,
}

impl Node {
    fn uses(&self) -> Vec<(&BufferSlice, Use)> {
        let cs = vk::PipelineStageFlags2::COMPUTE_SHADER;
        let tr = vk::PipelineStageFlags2::ALL_TRANSFER;
        match &self.kind {
            NodeKind::Dispatch(d) => {
                let mut v: Vec<_> = d
                    .bindings
                    .iter()
                    .flat_map(|bd| {
                        let (b, a) = (&bd.slice, bd.access);
                        let mut u = Vec::new();
                        if a.contains(Access::READ) {
                            u.push((
                                b,
                                Use {
                                    stage: cs,
                                    access: if bd.texel.is_some() {
                                        vk::AccessFlags2::SHADER_SAMPLED_READ
                                    } else {
                                        vk::AccessFlags2::SHADER_STORAGE_READ
                                    },
                                    write: false,
                                },
                            ));
                        }
                        if a.contains(Access::WRITE) {
                            u.push((
                                b,
                                Use {
                                    stage: cs,
                                    access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
                                    write: true,
                                },
                            ));
                        }
                        if a.contains(Access::INDIRECT) {
                            u.push((
                                b,
                                Use {
                                    stage: vk::PipelineStageFlags2::DRAW_INDIRECT,
                                    access: vk::AccessFlags2::INDIRECT_COMMAND_READ,
                                    write: false,
                                },
                            ));
                        }
                        u
                    })
                    .collect();
                if let Groups::Indirect(args) = &d.groups {
                    v.push((
                        args,
                        Use {
                            stage: vk::PipelineStageFlags2::DRAW_INDIRECT,
                            access: vk::AccessFlags2::INDIRECT_COMMAND_READ,
                            write: false,
                        },
                    ));
                }
                if let Some(word) = &d.condition {
                    v.push((
                        word,
                        Use {
                            stage: vk::PipelineStageFlags2::CONDITIONAL_RENDERING_EXT,
                            access: vk::AccessFlags2::CONDITIONAL_RENDERING_READ_EXT,
                            write: false,
                        },
                    ));
                }
                v
            }
            NodeKind::Fill { dst, .. } => {
                vec![(
                    dst,
                    Use {
                        stage: tr,
                        access: vk::AccessFlags2::TRANSFER_WRITE,
                        write: true,
                    },
                )]
            }
            NodeKind::Copy { src, dst } => vec![
                (
                    src,
                    Use {
                        stage: tr,
                        access: vk::AccessFlags2::TRANSFER_READ,
                        write: false,
                    },
                ),
                (
                    dst,
                    Use {
                        stage: tr,
                        access: vk::AccessFlags2::TRANSFER_WRITE,
                        write: true,
                    },
                ),
            ],
        }
    }

    fn kind_label(&self) -> String {
        match &self.kind {
            NodeKind::Dispatch(d) => {
                let mut s = match &d.groups {
                    Groups::Direct(g) => {
                        format!("dispatch {} {:?} x{}", d.kernel.name(), g, d.workgroup_size)
                    }
                    Groups::Indirect(a) => format!(
                        "dispatch-indirect {} (args '{}') x{}",
                        d.kernel.name(),
                        a.raw.name,
                        d.workgroup_size
                    ),
                };
                if let Some(w) = &d.condition {
                    let _ = write!(s, " if '{}'@{}", w.raw.name, w.offset);
                }
                s
            }
            NodeKind::Fill { value, .. } => format!("fill 0x{value:08x}"),
            NodeKind::Copy { .. } => "copy".to_string(),
        }
    }
}

/// A sequence of nodes to be compiled into a reusable command buffer.
#[derive(Clone)]
pub struct Graph {
    name: String,
    pub(super) nodes: Vec<Node>,
}

/// Options for [`Graph::compile`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CompileOptions {
    /// Write a GPU timestamp before and after every node (per-node [`CompiledGraph::profile`]).
    pub timestamps: bool,
    /// Write one GPU timestamp pair around the whole graph (total time only; cheap).
    pub graph_timestamps: bool,
    /// Serialise nodes and write a crash marker after each so a hang or device loss names the
    /// last node that completed (debugging aid; slower).
    pub crash_markers: bool,
}

impl CompileOptions {
    /// Timestamps on; crash markers when `SUPPLE_CRASH_MARKERS=1`.
    pub fn profiled() -> Self {
        CompileOptions {
            timestamps: true,
            graph_timestamps: true,
            crash_markers: std::env::var("SUPPLE_CRASH_MARKERS").is_ok_and(|v| v == "1"),
        }
    }
}

impl Graph {
    /// An empty graph.
    pub fn new(name: impl Into<String>) -> Self {
        Graph {
            name: name.into(),
            nodes: Vec::new(),
        }
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The recorded nodes, in recording order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Appends a dispatch; returns its node index.
    pub fn dispatch(&mut self, d: Dispatch) -> usize {
        let name = d.name.clone();
        self.nodes.push(Node {
            name,
            kind: NodeKind::Dispatch(d),
        });
        self.nodes.len() - 1
    }

    /// Appends a fill of `dst` with `value`; returns its node index.
    pub fn fill(
        &mut self,
        name: impl Into<String>,
        dst: impl Into<BufferSlice>,
        value: u32,
    ) -> usize {
        self.nodes.push(Node {
            name: name.into(),
            kind: NodeKind::Fill {
                dst: dst.into(),
                value,
            },
        });
        self.nodes.len() - 1
    }

    /// Appends a copy from `src` to `dst`; returns its node index.
    pub fn copy(
        &mut self,
        name: impl Into<String>,
        src: impl Into<BufferSlice>,
        dst: impl Into<BufferSlice>,
    ) -> usize {
        self.nodes.push(Node {
            name: name.into(),
            kind: NodeKind::Copy {
                src: src.into(),
                dst: dst.into(),
            },
        });
        self.nodes.len() - 1
    }

    /// Appends every node of `other` (graphs of sub-steps are concatenated this way).
    pub fn append(&mut self, other: Graph) {
        self.nodes.extend(other.nodes);
    }

    /// Prefixes every node's name with `prefix/` (a section of a larger graph: profiles and
    /// traces then say which section a node ran in).
    pub fn prefix_names(mut self, prefix: &str) -> Graph {
        for n in &mut self.nodes {
            n.name = format!("{prefix}/{}", n.name);
        }
        self
    }

    /// Predicates every dispatch of this graph that has no predicate yet on the first u32 of
    /// `word` ([`Dispatch::only_if`]: skipped while it is zero). Fills and copies are not
    /// affected by conditional rendering: they still run.
    pub fn only_if(mut self, word: impl Into<BufferSlice>) -> Graph {
        let word = word.into();
        for n in &mut self.nodes {
            if let NodeKind::Dispatch(d) = &mut n.kind {
                if d.condition.is_none() {
                    d.condition = Some(word.clone());
                }
            }
        }
        self
    }

    /// A texel binding: a buffer created with [`BufferUsage::TEXEL`], the offset a multiple of
    /// minTexelBufferOffsetAlignment and of the texel size, at most maxTexelBufferElements texels.
    fn check_texel_binding(&self, node: &str, b: &BufferSlice, f: TexelFormat) -> VkResult<()> {
        let caps = &b.raw.shared.caps;
        let align = caps.min_texel_offset_alignment.max(1);
        if !b.raw.usage.contains(BufferUsage::TEXEL) {
            return Err(self.err(format!(
                "node '{node}': '{}' is read through a texel buffer view but was not created with BufferUsage::TEXEL",
                b.raw.name
            )));
        }
        if b.offset % align != 0 || b.offset % f.bytes() != 0 {
            return Err(self.err(format!(
                "node '{node}': texel binding of '{}' at offset {} is not a multiple of minTexelBufferOffsetAlignment {align} and of the texel size {}",
                b.raw.name, b.offset, f.bytes()
            )));
        }
        if b.end() > b.raw.size {
            return Err(self.err(format!(
                "node '{node}': binding of '{}' exceeds the buffer",
                b.raw.name
            )));
        }
        let texels = b.size / f.bytes();
        if texels == 0 {
            return Err(self.err(format!(
                "node '{node}': texel binding of '{}' holds {} bytes, less than one texel of {} bytes",
                b.raw.name,
                b.size,
                f.bytes()
            )));
        }
        if texels > caps.max_texel_buffer_elements {
            return Err(self.err(format!(
                "node '{node}': '{}' holds {texels} texels but the device's maxTexelBufferElements is {}",
                b.raw.name, caps.max_texel_buffer_elements
            )));
        }
        Ok(())
    }

    fn err(&self, message: String) -> VkError {
        VkError::Graph {
            graph: self.name.clone(),
            message,
        }
    }

    /// Infers dependencies and levels: `(deps[i], level[i])`. `deps[i]` holds the earlier nodes
    /// whose accesses conflict with node i's and are still live: an access whose range a later
    /// node overwrites entirely is shadowed by that write (every node that would conflict with
    /// it conflicts with the write too, and comes after it), so levels are those of the full
    /// conflict relation while the work stays near linear in the number of nodes.
    fn analyse(&self) -> (Vec<Vec<usize>>, Vec<usize>) {
        /// Accesses of one buffer that later nodes may conflict with.
        #[derive(Default)]
        struct Live {
            /// (node, byte range) of writes not shadowed by a later covering write.
            writes: Vec<(usize, u64, u64)>,
            /// (node, byte range) of reads not shadowed by a later covering write.
            reads: Vec<(usize, u64, u64)>,
        }
        let overlaps = |a: (u64, u64), b: (u64, u64)| a.0 < b.1 && b.0 < a.1;
        let n = self.nodes.len();
        let mut deps = vec![Vec::new(); n];
        let mut level = vec![0usize; n];
        let mut live: std::collections::HashMap<u64, Live> = std::collections::HashMap::new();
        for (i, node) in self.nodes.iter().enumerate() {
            let uses = node.uses();
            let mut ds: Vec<usize> = Vec::new();
            for (b, u) in &uses {
                let Some(l) = live.get(&b.raw.id) else {
                    continue;
                };
                let r = (b.offset, b.end());
                let conflicting = l
                    .writes
                    .iter()
                    .chain(if u.write { &l.reads[..] } else { &[] })
                    .filter(|&&(_, lo, hi)| overlaps(r, (lo, hi)))
                    .map(|&(j, _, _)| j);
                ds.extend(conflicting);
            }
            ds.sort_unstable();
            ds.dedup();
            ds.retain(|&j| j != i);
            level[i] = ds.iter().map(|&j| level[j] + 1).max().unwrap_or(0);
            deps[i] = ds;
            for (b, u) in &uses {
                let l = live.entry(b.raw.id).or_default();
                let (lo, hi) = (b.offset, b.end());
                if u.write {
                    let shadowed = |&(j, a, z): &(usize, u64, u64)| j != i && lo <= a && z <= hi;
                    l.writes.retain(|e| !shadowed(e));
                    l.reads.retain(|e| !shadowed(e));
                    l.writes.push((i, lo, hi));
                } else {
                    l.reads.push((i, lo, hi));
                }
            }
        }
        (deps, level)
    }

    /// Compiles the graph into a reusable command buffer on `ctx`. While the context asks for
    /// per-node timestamps ([`Context::set_node_timestamps`], or a trace in progress) they are
    /// recorded whatever `options` says. Per-node workgroup-size overrides of the context
    /// ([`super::ContextOptions::workgroup_overrides`]) reshape matching dispatches.
    pub fn compile(&self, ctx: &Context, options: CompileOptions) -> VkResult<CompiledGraph> {
        if ctx.shared.options.workgroup_overrides.rules().is_empty() {
            self.compile_as_recorded(ctx, options)
        } else {
            self.reshaped(ctx).compile_as_recorded(ctx, options)
        }
    }

    /// This graph with the context's workgroup-size overrides applied to its dispatch nodes
    /// (each outcome goes to [`Context::workgroup_override_report`]).
    fn reshaped(&self, ctx: &Context) -> Graph {
        let overrides = &ctx.shared.options.workgroup_overrides;
        let mut g = self.clone();
        let mut report = ctx
            .shared
            .workgroup_report
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for node in &mut g.nodes {
            let NodeKind::Dispatch(d) = &mut node.kind else {
                continue;
            };
            let Some(size) = overrides.size_for(&node.name) else {
                continue;
            };
            let reason = match (&mut d.groups, d.kernel.source().workgroup_dependence) {
                (_, Some(why)) => Some(format!("the kernel {why}")),
                (Groups::Indirect(_), None) => {
                    Some("indirect dispatch (group counts are computed on the GPU)".to_string())
                }
                (Groups::Direct(groups), None) => {
                    let invocations = groups[0] as u64 * d.workgroup_size as u64;
                    groups[0] = invocations.div_ceil(size as u64).max(1) as u32;
                    None
                }
            };
            report.insert(
                node.name.clone(),
                WorkgroupOverrideUse {
                    node: node.name.clone(),
                    kernel: d.kernel.name().to_string(),
                    requested: size,
                    recorded: d.workgroup_size,
                    applied: reason.is_none(),
                    reason,
                },
            );
            if report[&node.name].applied {
                d.workgroup_size = size;
            }
        }
        g
    }

    fn compile_as_recorded(
        &self,
        ctx: &Context,
        options: CompileOptions,
    ) -> VkResult<CompiledGraph> {
        let started = std::time::Instant::now();
        let mut options = options;
        if ctx.node_timestamps() {
            options.timestamps = true;
            options.graph_timestamps = true;
        }
        let s = &ctx.shared;
        let align = s.caps.min_storage_offset_alignment.max(1);
        for n in &self.nodes {
            if let NodeKind::Dispatch(d) = &n.kind {
                if d.push.len() > PUSH_CONSTANT_BYTES as usize {
                    return Err(self.err(format!(
                        "node '{}': {} push-constant bytes > {PUSH_CONSTANT_BYTES}",
                        n.name,
                        d.push.len()
                    )));
                }
                if let Some(word) = &d.condition {
                    if !ctx.conditional_rendering() {
                        return Err(self.err(format!(
                            "node '{}': predicated on '{}' but the context has no conditional rendering (VK_EXT_conditional_rendering off or absent)",
                            n.name, word.raw.name
                        )));
                    }
                    if word.offset % 4 != 0
                        || word.offset + 4 > word.raw.size
                        || !word.raw.usage.contains(BufferUsage::CONDITION)
                    {
                        return Err(self.err(format!(
                            "node '{}': predicate word of '{}' at offset {}: needs a multiple of 4 inside a buffer created with BufferUsage::CONDITION",
                            n.name, word.raw.name, word.offset
                        )));
                    }
                }
                if d.bindings.len() > 64 {
                    return Err(self.err(format!(
                        "node '{}': {} bindings, more than the 64 a descriptor set layout here describes",
                        n.name,
                        d.bindings.len()
                    )));
                }
                for bd in &d.bindings {
                    let b = &bd.slice;
                    if let Some(f) = bd.texel {
                        self.check_texel_binding(&n.name, b, f)?;
                    } else if b.offset % align != 0 {
                        return Err(self.err(format!(
                            "node '{}': binding of '{}' at offset {} is not a multiple of minStorageBufferOffsetAlignment {align}",
                            n.name, b.raw.name, b.offset
                        )));
                    }
                    if b.end() > b.raw.size {
                        return Err(self.err(format!(
                            "node '{}': binding of '{}' exceeds the buffer",
                            n.name, b.raw.name
                        )));
                    }
                }
            }
            for (b, _) in n.uses() {
                if !Arc::ptr_eq(&b.raw.shared, s) {
                    return Err(self.err(format!(
                        "node '{}': buffer '{}' belongs to another device",
                        n.name, b.raw.name
                    )));
                }
            }
        }
        let (deps, level) = self.analyse();
        let uses: Vec<_> = self.nodes.iter().map(Node::uses).collect();
        let levels = level.iter().copied().max().map_or(0, |m| m + 1);
        let mut schedule = Vec::with_capacity(self.nodes.len() + levels);
        let mut by_level = vec![Vec::new(); levels];
        for (i, &l) in level.iter().enumerate() {
            by_level[l].push(i);
        }
        for (l, members) in by_level.into_iter().enumerate() {
            if l > 0 {
                let mut b = BarrierInfo::default();
                for &i in &members {
                    for &j in &deps[i] {
                        for (ua_b, ua) in &uses[i] {
                            for (ub_b, ub) in &uses[j] {
                                if ua_b.overlaps(ub_b) && (ua.write || ub.write) {
                                    b.src_stage |= ub.stage;
                                    b.dst_stage |= ua.stage;
                                    if ub.write {
                                        b.src_access |= ub.access;
                                        b.dst_access |= ua.access;
                                    }
                                }
                            }
                        }
                    }
                }
                schedule.push(Step::Barrier(b));
            }
            schedule.extend(members.into_iter().map(Step::Node));
        }
        let out = CompiledGraph::record(ctx, self, schedule, deps, options);
        ctx.trace_host_span(
            &format!("record {}", self.name),
            "record",
            started,
            std::time::Instant::now(),
        );
        out
    }
}

/// Each predicate word of `graph`'s dispatches and how many dispatches it predicates.
fn predicate_words(graph: &Graph) -> Vec<(BufferSlice, u64)> {
    let mut out: Vec<(BufferSlice, u64)> = Vec::new();
    for n in &graph.nodes {
        let NodeKind::Dispatch(d) = &n.kind else {
            continue;
        };
        let Some(w) = &d.condition else {
            continue;
        };
        match out
            .iter_mut()
            .find(|(o, _)| o.raw.id == w.raw.id && o.offset == w.offset)
        {
            Some((_, k)) => *k += 1,
            None => out.push((w.clone(), 1)),
        }
    }
    out
}

/// A memory barrier inserted between two levels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BarrierInfo {
    /// Stages that must complete first.
    pub src_stage: vk::PipelineStageFlags2,
    /// Writes made available.
    pub src_access: vk::AccessFlags2,
    /// Stages that wait.
    pub dst_stage: vk::PipelineStageFlags2,
    /// Accesses the writes are made visible to.
    pub dst_access: vk::AccessFlags2,
}

/// One step of a compiled schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A barrier between levels.
    Barrier(BarrierInfo),
    /// Node `i` (index in recording order).
    Node(usize),
}

/// GPU time of one node in the last completed run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NodeTiming {
    /// Node name.
    pub name: String,
    /// Kernel name for dispatches, `fill`/`copy` otherwise.
    pub kernel: String,
    /// GPU milliseconds between the timestamps around the node.
    pub gpu_ms: f64,
}

/// Per-node GPU timings of one graph run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GraphProfile {
    /// Graph name.
    pub graph: String,
    /// Nodes in recording order (empty when compiled without per-node timestamps).
    pub nodes: Vec<NodeTiming>,
    /// GPU milliseconds of the whole graph (timestamps at its start and end).
    pub total_ms: f64,
}

struct NodeInfo {
    name: String,
    label: String,
    kernel: String,
    workgroup_size: u32,
}

/// A graph recorded into a reusable command buffer.
pub struct CompiledGraph {
    ctx: Context,
    name: String,
    nodes: Vec<NodeInfo>,
    schedule: Vec<Step>,
    deps: Vec<Vec<usize>>,
    cmd: vk::CommandBuffer,
    descriptor_pool: vk::DescriptorPool,
    /// The uniform texel buffer views of the texel bindings (destroyed with the graph).
    views: Vec<vk::BufferView>,
    query_pool: vk::QueryPool,
    marker: Option<GpuBuffer<u32>>,
    per_node_timestamps: bool,
    /// Each predicate word and the number of dispatches predicated on it.
    conditions: Vec<(BufferSlice, u64)>,
    /// The recorded graph (bindings keep its buffers alive) and its prepared pipelines and
    /// descriptor sets, for [`CompiledGraph::record_into`].
    graph: Graph,
    prepared: Vec<Option<(super::kernel::Pipeline, vk::DescriptorSet)>>,
    last: Mutex<Option<Ticket>>,
    /// The run submitted while tracing and not yet collected: its ticket and submission time.
    pending_trace: Mutex<Option<(Ticket, std::time::Instant)>>,
}

// SAFETY: Vulkan handles are plain integers; the command buffer is only submitted under the
// context's queue mutex and never re-recorded after construction.
unsafe impl Send for CompiledGraph {}
// SAFETY: see above; `last` is behind a Mutex.
unsafe impl Sync for CompiledGraph {}

impl CompiledGraph {
    fn record(
        ctx: &Context,
        graph: &Graph,
        schedule: Vec<Step>,
        deps: Vec<Vec<usize>>,
        options: CompileOptions,
    ) -> VkResult<CompiledGraph> {
        let s = &ctx.shared;
        let d = &s.device;
        let n = graph.nodes.len();
        let dispatches: Vec<&Dispatch> = graph
            .nodes
            .iter()
            .filter_map(|n| {
                if let NodeKind::Dispatch(d) = &n.kind {
                    Some(d)
                } else {
                    None
                }
            })
            .collect();
        let texel_bindings: u32 = dispatches
            .iter()
            .map(|d| d.bindings.iter().filter(|b| b.texel.is_some()).count() as u32)
            .sum();
        let storage_bindings: u32 = dispatches
            .iter()
            .map(|d| d.bindings.len() as u32)
            .sum::<u32>()
            - texel_bindings;
        let marker = if options.crash_markers {
            let m: GpuBuffer<u32> = ctx.create_buffer(
                &format!("{}-crash-marker", graph.name),
                1,
                BufferUsage::HOST_READ,
            )?;
            m.write(&[0])?;
            Some(m)
        } else {
            None
        };
        let timestamps = options.timestamps && s.caps.timestamps && n > 0;
        let bracket = (options.timestamps || options.graph_timestamps) && s.caps.timestamps;
        let mut out = CompiledGraph {
            ctx: ctx.clone(),
            name: graph.name.clone(),
            nodes: graph
                .nodes
                .iter()
                .map(|n| NodeInfo {
                    name: n.name.clone(),
                    label: n.kind_label(),
                    kernel: match &n.kind {
                        NodeKind::Dispatch(d) => d.kernel.name().to_string(),
                        NodeKind::Fill { .. } => "fill".into(),
                        NodeKind::Copy { .. } => "copy".into(),
                    },
                    workgroup_size: match &n.kind {
                        NodeKind::Dispatch(d) => d.workgroup_size,
                        _ => 0,
                    },
                })
                .collect(),
            schedule,
            deps,
            cmd: vk::CommandBuffer::null(),
            descriptor_pool: vk::DescriptorPool::null(),
            views: Vec::new(),
            query_pool: vk::QueryPool::null(),
            marker,
            per_node_timestamps: false,
            conditions: predicate_words(graph),
            graph: graph.clone(),
            prepared: Vec::new(),
            last: Mutex::new(None),
            pending_trace: Mutex::new(None),
        };
        // SAFETY: all objects are created on this device and destroyed in Drop; recorded buffers
        // are kept alive by the clone of the graph in `graph`.
        unsafe {
            if !dispatches.is_empty() {
                let mut sizes = vec![vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::STORAGE_BUFFER,
                    descriptor_count: storage_bindings.max(1),
                }];
                if texel_bindings > 0 {
                    sizes.push(vk::DescriptorPoolSize {
                        ty: vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
                        descriptor_count: texel_bindings,
                    });
                }
                out.descriptor_pool = d
                    .create_descriptor_pool(
                        &vk::DescriptorPoolCreateInfo::default()
                            .max_sets(dispatches.len() as u32)
                            .pool_sizes(&sizes),
                        None,
                    )
                    .vk("vkCreateDescriptorPool")?;
            }
            out.per_node_timestamps = timestamps;
            if bracket {
                out.query_pool = d
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(2 * n as u32 + 2),
                        None,
                    )
                    .vk("vkCreateQueryPool")?;
            }
            // Pipelines and descriptor sets, per dispatch node.
            // One view per (buffer, range, format) of the graph, shared by its dispatches.
            let mut view_cache: HashMap<(u64, u64, u64, TexelFormat), vk::BufferView> =
                HashMap::new();
            let view_of = |cache: &mut HashMap<_, vk::BufferView>,
                           owned: &mut Vec<vk::BufferView>,
                           b: &BufferSlice,
                           f: TexelFormat|
             -> VkResult<vk::BufferView> {
                let key = (b.raw.id, b.offset, b.size, f);
                if let Some(v) = cache.get(&key) {
                    return Ok(*v);
                }
                let v = d
                    .create_buffer_view(
                        &vk::BufferViewCreateInfo::default()
                            .buffer(b.raw.handle)
                            .format(f.vk())
                            .offset(b.offset)
                            .range(b.size / f.bytes() * f.bytes()),
                        None,
                    )
                    .vk("vkCreateBufferView")?;
                owned.push(v);
                cache.insert(key, v);
                Ok(v)
            };
            let mut prepared: Vec<Option<(super::kernel::Pipeline, vk::DescriptorSet)>> =
                vec![None; n];
            {
                let mut store = s.pipelines.lock().unwrap_or_else(|p| p.into_inner());
                for (i, node) in graph.nodes.iter().enumerate() {
                    let NodeKind::Dispatch(disp) = &node.kind else {
                        continue;
                    };
                    let texel_mask = disp
                        .bindings
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| b.texel.is_some())
                        .fold(0u64, |m, (k, _)| m | 1 << k);
                    let p = store.get(
                        d,
                        disp.kernel,
                        disp.workgroup_size,
                        &disp.spec,
                        (disp.bindings.len() as u32, texel_mask),
                        s.options.kernel_source_dir.as_deref(),
                    )?;
                    let layouts = [p.set_layout];
                    let set = d
                        .allocate_descriptor_sets(
                            &vk::DescriptorSetAllocateInfo::default()
                                .descriptor_pool(out.descriptor_pool)
                                .set_layouts(&layouts),
                        )
                        .vk("vkAllocateDescriptorSets")?[0];
                    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = disp
                        .bindings
                        .iter()
                        .map(|b| {
                            [vk::DescriptorBufferInfo {
                                buffer: b.slice.raw.handle,
                                offset: b.slice.offset,
                                range: b.slice.size,
                            }]
                        })
                        .collect();
                    let mut views = Vec::with_capacity(disp.bindings.len());
                    for b in &disp.bindings {
                        views.push(match b.texel {
                            Some(f) => [view_of(&mut view_cache, &mut out.views, &b.slice, f)?],
                            None => [vk::BufferView::null()],
                        });
                    }
                    let writes: Vec<_> = infos
                        .iter()
                        .zip(&views)
                        .zip(&disp.bindings)
                        .enumerate()
                        .map(|(k, ((info, view), b))| {
                            let w = vk::WriteDescriptorSet::default()
                                .dst_set(set)
                                .dst_binding(k as u32);
                            match b.texel {
                                Some(_) => w
                                    .descriptor_type(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
                                    .texel_buffer_view(view),
                                None => w
                                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                                    .buffer_info(info),
                            }
                        })
                        .collect();
                    d.update_descriptor_sets(&writes, &[]);
                    prepared[i] = Some((p, set));
                }
            }
            out.cmd = ctx.allocate_command_buffer()?;
            ctx.set_name(out.cmd, &graph.name);
            d.begin_command_buffer(out.cmd, &vk::CommandBufferBeginInfo::default())
                .vk("vkBeginCommandBuffer")?;
            out.prepared = prepared;
            out.record_commands(out.cmd, timestamps, bracket);
            d.end_command_buffer(out.cmd).vk("vkEndCommandBuffer")?;
        }
        Ok(out)
    }

    /// Records this graph's commands (barriers, dispatches, fills, copies; no timestamps) into
    /// a command buffer the host owns and submits, e.g. inside its frame. The commands start
    /// with a full memory barrier, so they run after everything recorded or submitted before
    /// them on that queue. The host is otherwise responsible for ordering: the recorded
    /// commands read and write Supple's buffers, so
    /// the host must not submit them while a Supple submission that uses the same buffers is
    /// pending (wait on [`Context::timeline_semaphore`] for the last [`Ticket`], or make the
    /// host's submission wait on it), and must make the commands' writes visible to its own
    /// later reads with a barrier (compute-shader writes → the host's stage/access).
    ///
    /// # Safety
    /// - `cmd` was allocated on this graph's device from a pool whose queue family is
    ///   [`Context::queue_family_index`] (Supple's buffers are exclusive to that family) and
    ///   is in the recording state, outside a render pass.
    /// - The host submits `cmd` to a queue of that family, and keeps this graph (and so its
    ///   buffers, pipelines and descriptor sets) alive until that submission has completed.
    pub unsafe fn record_into(&self, cmd: vk::CommandBuffer) {
        self.record_commands(cmd, false, false);
    }

    /// Records the schedule into `self.cmd`.
    ///
    /// # Safety
    /// `self.cmd` is in the recording state; `prepared` holds a pipeline and set per dispatch.
    unsafe fn record_commands(&self, cmd: vk::CommandBuffer, timestamps: bool, bracket: bool) {
        let graph = &self.graph;
        let prepared = &self.prepared;
        let d = &self.ctx.shared.device;
        let labels = self.ctx.shared.debug_utils_device.as_ref();
        let n = graph.nodes.len() as u32;
        if bracket {
            d.cmd_reset_query_pool(cmd, self.query_pool, 0, 2 * n + 2);
            d.cmd_write_timestamp2(
                cmd,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                self.query_pool,
                2 * n,
            );
        }
        // Work submitted earlier on the queue (other graphs, the host's own commands) comes
        // first and its writes are visible here: a barrier's first scope includes every
        // command earlier in submission order, so graphs submitted back to back (without a host
        // wait, or recorded into a host's command buffer) never overlap or read stale data.
        let full = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            .dst_access_mask(vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE)];
        if !self.schedule.is_empty() {
            d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&full));
        }
        let mut any_write = false;
        // The predicate of the conditional-rendering block open now: consecutive nodes on the
        // same word share one block; a barrier, another word or a crash marker closes it.
        let cr = self.ctx.shared.conditional_rendering.as_ref();
        let mut active: Option<(u64, u64)> = None;
        let end_block = |active: &mut Option<(u64, u64)>| {
            if let (Some(_), Some(cr)) = (active.take(), cr) {
                (cr.fp().cmd_end_conditional_rendering_ext)(cmd);
            }
        };
        for step in &self.schedule {
            match *step {
                Step::Barrier(b) => {
                    end_block(&mut active);
                    let mb = [vk::MemoryBarrier2::default()
                        .src_stage_mask(b.src_stage)
                        .src_access_mask(b.src_access)
                        .dst_stage_mask(b.dst_stage)
                        .dst_access_mask(b.dst_access)];
                    d.cmd_pipeline_barrier2(
                        cmd,
                        &vk::DependencyInfo::default().memory_barriers(&mb),
                    );
                }
                Step::Node(i) => {
                    let node = &graph.nodes[i];
                    any_write |= node.uses().iter().any(|(_, u)| u.write);
                    let word = match &node.kind {
                        NodeKind::Dispatch(disp) => disp.condition.as_ref(),
                        _ => None,
                    };
                    let key = word.map(|w| (w.raw.id, w.offset));
                    if key != active {
                        end_block(&mut active);
                        if let (Some(w), Some(cr)) = (word, cr) {
                            let info = vk::ConditionalRenderingBeginInfoEXT::default()
                                .buffer(w.raw.handle)
                                .offset(w.offset);
                            (cr.fp().cmd_begin_conditional_rendering_ext)(cmd, &info);
                            active = key;
                        }
                    }
                    let cname = std::ffi::CString::new(node.name.as_str()).unwrap_or_default();
                    if let Some(l) = labels {
                        l.cmd_begin_debug_utils_label(
                            cmd,
                            &vk::DebugUtilsLabelEXT::default().label_name(&cname),
                        );
                    }
                    if timestamps {
                        d.cmd_write_timestamp2(
                            cmd,
                            vk::PipelineStageFlags2::ALL_COMMANDS,
                            self.query_pool,
                            2 * i as u32,
                        );
                    }
                    match &node.kind {
                        NodeKind::Dispatch(disp) => {
                            let (p, set) = prepared[i].expect("dispatch nodes are prepared");
                            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, p.pipeline);
                            d.cmd_bind_descriptor_sets(
                                cmd,
                                vk::PipelineBindPoint::COMPUTE,
                                p.layout,
                                0,
                                &[set],
                                &[],
                            );
                            if !disp.push.is_empty() {
                                let mut bytes = disp.push.clone();
                                bytes.resize(bytes.len().div_ceil(4) * 4, 0);
                                d.cmd_push_constants(
                                    cmd,
                                    p.layout,
                                    vk::ShaderStageFlags::COMPUTE,
                                    0,
                                    &bytes,
                                );
                            }
                            match &disp.groups {
                                Groups::Direct(g) => d.cmd_dispatch(cmd, g[0], g[1], g[2]),
                                Groups::Indirect(a) => {
                                    d.cmd_dispatch_indirect(cmd, a.raw.handle, a.offset)
                                }
                            }
                        }
                        NodeKind::Fill { dst, value } => {
                            d.cmd_fill_buffer(
                                cmd,
                                dst.raw.handle,
                                dst.offset,
                                dst.size / 4 * 4,
                                *value,
                            );
                        }
                        NodeKind::Copy { src, dst } => {
                            let region = [vk::BufferCopy {
                                src_offset: src.offset,
                                dst_offset: dst.offset,
                                size: src.size.min(dst.size),
                            }];
                            d.cmd_copy_buffer(cmd, src.raw.handle, dst.raw.handle, &region);
                        }
                    }
                    if timestamps {
                        d.cmd_write_timestamp2(
                            cmd,
                            vk::PipelineStageFlags2::ALL_COMMANDS,
                            self.query_pool,
                            2 * i as u32 + 1,
                        );
                    }
                    if let Some(l) = labels {
                        l.cmd_end_debug_utils_label(cmd);
                    }
                    if let Some(m) = &self.marker {
                        end_block(&mut active);
                        d.cmd_pipeline_barrier2(
                            cmd,
                            &vk::DependencyInfo::default().memory_barriers(&full),
                        );
                        d.cmd_fill_buffer(cmd, m.raw.handle, 0, 4, i as u32 + 1);
                        d.cmd_pipeline_barrier2(
                            cmd,
                            &vk::DependencyInfo::default().memory_barriers(&full),
                        );
                    }
                }
            }
        }
        end_block(&mut active);
        if bracket {
            d.cmd_write_timestamp2(
                cmd,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                self.query_pool,
                2 * n + 1,
            );
        }
        if any_write {
            // Make every write visible to host reads after the timeline signal.
            let mb = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
                .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                .dst_access_mask(vk::AccessFlags2::HOST_READ)];
            d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&mb));
        }
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compiled schedule (nodes grouped by level, barriers between levels).
    pub fn schedule(&self) -> &[Step] {
        &self.schedule
    }

    /// Number of compute dispatches the graph records (what one submission adds to
    /// [`super::Context::counters`]).
    pub fn dispatch_count(&self) -> usize {
        self.graph
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Dispatch(_)))
            .count()
    }

    /// Number of dispatches predicated on a device-written word ([`Dispatch::only_if`]).
    pub fn conditional_dispatch_count(&self) -> usize {
        self.conditions.iter().map(|(_, n)| *n as usize).sum()
    }

    /// After a completed run: the dispatches that conditional rendering skipped in it (those
    /// predicated on a word that was zero), read from the predicate words, which must be
    /// host-visible; they are added to [`Context::counters`]' `dispatches_skipped`. Call once
    /// per run, after its wait, and before the graph is submitted again.
    pub fn count_skipped_dispatches(&self) -> VkResult<u64> {
        let mut skipped = 0u64;
        for (word, n) in &self.conditions {
            let raw = &word.raw;
            let visible = raw
                .usage
                .intersects(BufferUsage::HOST_READ | BufferUsage::HOST_WRITE);
            let Some(p) = raw.mapped.filter(|_| visible) else {
                return Err(VkError::Graph {
                    graph: self.name.clone(),
                    message: format!(
                        "predicate word of '{}' is not host-visible: skipped dispatches cannot be counted",
                        raw.name
                    ),
                });
            };
            // SAFETY: the word lies inside the persistently mapped buffer (checked at compile
            // time) and the run that wrote it completed (caller contract).
            let value = unsafe {
                std::ptr::read_volatile(p.as_ptr().add(word.offset as usize).cast::<u32>())
            };
            if value == 0 {
                skipped += n;
            }
        }
        self.ctx.count_skipped_dispatches(skipped);
        Ok(skipped)
    }

    /// Number of uniform texel buffer views the graph created (one per buffer range and format,
    /// however many dispatches read it).
    pub fn texel_view_count(&self) -> usize {
        self.views.len()
    }

    /// Number of barriers in the schedule.
    pub fn barrier_count(&self) -> usize {
        self.schedule
            .iter()
            .filter(|s| matches!(s, Step::Barrier(_)))
            .count()
    }

    /// For each node, the earlier nodes it depends on (hazards on declared buffers).
    pub fn dependencies(&self) -> &[Vec<usize>] {
        &self.deps
    }

    /// Submits the command buffer; waits (bounded) for this graph's previous run first.
    pub fn submit(&self) -> VkResult<Ticket> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = *last {
            // A run already complete (the usual case: its caller waited) needs no second
            // host wait; only its trace is collected.
            if self.ctx.is_complete(t)? {
                self.collect_trace(t)?;
            } else {
                self.wait(t)?;
            }
        }
        if let Some(m) = &self.marker {
            m.write(&[0])?;
        }
        let submitted = std::time::Instant::now();
        let t = self.ctx.submit_raw(self.cmd)?;
        self.ctx.count_dispatches(self.dispatch_count() as u64);
        *last = Some(t);
        if self.ctx.is_tracing() {
            let now = std::time::Instant::now();
            self.ctx
                .trace_host_span(&format!("submit {}", self.name), "submit", submitted, now);
            *self.pending_trace.lock().unwrap_or_else(|p| p.into_inner()) = Some((t, submitted));
        }
        Ok(t)
    }

    /// After a completed wait on `t`: appends the traced run `t` (if any) to the context's
    /// trace, with its per-node timestamps.
    fn collect_trace(&self, t: Ticket) -> VkResult<()> {
        let pending = {
            let mut p = self.pending_trace.lock().unwrap_or_else(|p| p.into_inner());
            match *p {
                Some((pt, _)) if pt <= t => p.take(),
                _ => None,
            }
        };
        let Some((_, submitted)) = pending else {
            return Ok(());
        };
        let completed = std::time::Instant::now();
        let Some(raw) = self.read_timestamps()? else {
            return Ok(());
        };
        let n = self.nodes.len();
        let period = self.ctx.shared.caps.timestamp_period_ns as f64;
        let start = raw[2 * n];
        let rel = |v: u64| v.saturating_sub(start) as f64 * period;
        let mut nodes = Vec::new();
        if self.per_node_timestamps {
            // In execution order: each node is ready when the previous one has ended.
            let mut ready = 0.0f64;
            for step in &self.schedule {
                if let Step::Node(i) = *step {
                    let node = &self.nodes[i];
                    let (start_ns, end_ns) = (rel(raw[2 * i]), rel(raw[2 * i + 1]));
                    nodes.push(super::trace::NodeSpan {
                        name: node.name.clone(),
                        kernel: node.kernel.clone(),
                        workgroup_size: node.workgroup_size,
                        ready_ns: ready.min(start_ns),
                        start_ns,
                        end_ns,
                    });
                    ready = ready.max(end_ns);
                }
            }
        }
        self.ctx.trace_graph_run(super::trace::GraphRun {
            graph: self.name.clone(),
            submitted,
            completed,
            gpu_total_ns: rel(raw[2 * n + 1]),
            nodes,
        });
        Ok(())
    }

    /// The raw timestamps of the last completed run: `2n` per-node values (zero when compiled
    /// without per-node timestamps) then the graph's start and end; `None` without a query pool.
    fn read_timestamps(&self) -> VkResult<Option<Vec<u64>>> {
        if self.query_pool == vk::QueryPool::null() {
            return Ok(None);
        }
        let n = self.nodes.len();
        let mut raw = vec![0u64; 2 * n + 2];
        // SAFETY: the pool holds 2n + 2 queries; the per-node ones are read only when written;
        // the caller waited for the run that wrote them.
        unsafe {
            let dev = &self.ctx.shared.device;
            dev.get_query_pool_results(
                self.query_pool,
                2 * n as u32,
                &mut raw[2 * n..],
                vk::QueryResultFlags::TYPE_64,
            )
            .vk("vkGetQueryPoolResults")?;
            if self.per_node_timestamps {
                dev.get_query_pool_results(
                    self.query_pool,
                    0,
                    &mut raw[..2 * n],
                    vk::QueryResultFlags::TYPE_64,
                )
                .vk("vkGetQueryPoolResults")?;
            }
        }
        Ok(Some(raw))
    }

    /// Waits (bounded by the context's timeout) for a run of this graph.
    pub fn wait(&self, t: Ticket) -> VkResult<()> {
        self.wait_timeout(t, self.ctx.shared.options.wait_timeout)
    }

    /// Waits at most `timeout`; a timeout or device loss names the last completed node when
    /// crash markers are on.
    pub fn wait_timeout(&self, t: Ticket, timeout: std::time::Duration) -> VkResult<()> {
        // The context skips the wait (and does not count one) for a ticket an earlier wait saw
        // complete, e.g. reading the timestamps after `run`.
        match self.ctx.wait_for(t, &self.name, timeout) {
            Ok(()) => self.collect_trace(t),
            Err(VkError::Timeout {
                what, timeout_ms, ..
            }) => Err(VkError::Timeout {
                what,
                timeout_ms,
                last_node: self.last_completed_node(),
            }),
            Err(VkError::DeviceLost { what, .. }) => Err(VkError::DeviceLost {
                what,
                last_node: self.last_completed_node(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Submits and waits.
    pub fn run(&self) -> VkResult<()> {
        let t = self.submit()?;
        self.wait(t)
    }

    /// With crash markers on: the name of the last node that completed in the current run.
    pub fn last_completed_node(&self) -> Option<String> {
        let m = self.marker.as_ref()?;
        let v = *m.mapped()?.first()?;
        Some(match v {
            0 => "none (the first node did not complete)".to_string(),
            i => {
                let idx = i as usize - 1;
                format!(
                    "#{idx} '{}'",
                    self.nodes.get(idx).map_or("?", |n| n.name.as_str())
                )
            }
        })
    }

    /// GPU milliseconds of the last completed run (whole-graph timestamps; 0 when the graph was
    /// compiled without timestamps or has not run).
    pub fn gpu_ms(&self) -> VkResult<f64> {
        Ok(self.profile()?.map_or(0.0, |p| p.total_ms))
    }

    /// Per-node GPU timings of the last completed run (compile with timestamps).
    pub fn profile(&self) -> VkResult<Option<GraphProfile>> {
        if self.query_pool == vk::QueryPool::null() {
            return Ok(None);
        }
        if let Some(t) = *self.last.lock().unwrap_or_else(|p| p.into_inner()) {
            self.wait(t)?;
        } else {
            return Ok(None);
        }
        let n = self.nodes.len();
        let Some(raw) = self.read_timestamps()? else {
            return Ok(None);
        };
        let period = self.ctx.shared.caps.timestamp_period_ns as f64 * 1e-6;
        let nodes = if !self.per_node_timestamps {
            Vec::new()
        } else {
            self.nodes
                .iter()
                .enumerate()
                .map(|(i, n)| NodeTiming {
                    name: n.name.clone(),
                    kernel: n.kernel.clone(),
                    gpu_ms: raw[2 * i + 1].saturating_sub(raw[2 * i]) as f64 * period,
                })
                .collect()
        };
        let total_ms = raw[2 * n + 1].saturating_sub(raw[2 * n]) as f64 * period;
        Ok(Some(GraphProfile {
            graph: self.name.clone(),
            nodes,
            total_ms,
        }))
    }

    /// A text dump: one line per node and barrier, in execution order.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "graph '{}': {} nodes, {} barriers\n",
            self.name,
            self.nodes.len(),
            self.barrier_count()
        );
        for step in &self.schedule {
            match step {
                Step::Barrier(b) => {
                    let _ = writeln!(
                        s,
                        "  -- barrier {:?} ({:?}) -> {:?} ({:?})",
                        b.src_stage, b.src_access, b.dst_stage, b.dst_access
                    );
                }
                Step::Node(i) => {
                    let n = &self.nodes[*i];
                    let deps: Vec<String> = self.deps[*i].iter().map(|d| format!("#{d}")).collect();
                    let _ = writeln!(
                        s,
                        "  #{i} {}: {} after [{}]",
                        n.name,
                        n.label,
                        deps.join(", ")
                    );
                }
            }
        }
        s
    }

    /// A Graphviz DOT dump of nodes and their dependencies.
    pub fn to_dot(&self) -> String {
        let mut s = format!(
            "digraph \"{}\" {{\n  rankdir=TB;\n",
            self.name.replace('"', "'")
        );
        for (i, n) in self.nodes.iter().enumerate() {
            let _ = writeln!(
                s,
                "  n{i} [shape=box,label=\"#{i} {}\\n{}\"];",
                n.name.replace('"', "'"),
                n.label.replace('"', "'")
            );
        }
        for (i, ds) in self.deps.iter().enumerate() {
            for d in ds {
                let _ = writeln!(s, "  n{d} -> n{i};");
            }
        }
        s.push_str("}\n");
        s
    }
}

impl Drop for CompiledGraph {
    fn drop(&mut self) {
        if let Some(t) = *self.last.get_mut().unwrap_or_else(|p| p.into_inner()) {
            if self.ctx.wait(t, &self.name).is_err() {
                // The GPU is hung or lost: leaking is the only safe option.
                return;
            }
        }
        let d = &self.ctx.shared.device;
        // SAFETY: the last submission completed; these objects belong to this graph.
        unsafe {
            if self.cmd != vk::CommandBuffer::null() {
                self.ctx.free_command_buffer(self.cmd);
            }
            if self.descriptor_pool != vk::DescriptorPool::null() {
                d.destroy_descriptor_pool(self.descriptor_pool, None);
            }
            for v in self.views.drain(..) {
                d.destroy_buffer_view(v, None);
            }
            if self.query_pool != vk::QueryPool::null() {
                d.destroy_query_pool(self.query_pool, None);
            }
        }
    }
}
