//! The LBVH's data as the host sees it: axis-aligned boxes, the Karras tree topology and a whole
//! tree read back from the GPU ([`super::Lbvh`]), and the order-preserving float encoding of the
//! atomic bounds. Node numbering: internal nodes `0..n-1` (the root is 0), leaf `j` (the j-th
//! primitive in Morton order) is node `n - 1 + j`; with one primitive the root is that leaf.

/// Marks "no node / no primitive".
pub const INVALID: u32 = u32::MAX;

/// Axis-aligned bounding box in f32 (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Lower corner (m).
    pub min: [f32; 3],
    /// Upper corner (m).
    pub max: [f32; 3],
}

impl Aabb {
    /// The empty box (min = +inf, max = -inf).
    pub const EMPTY: Aabb = Aabb {
        min: [f32::INFINITY; 3],
        max: [f32::NEG_INFINITY; 3],
    };

    /// Grows the box to contain `p`.
    pub fn grow(&mut self, p: [f32; 3]) {
        for (k, &x) in p.iter().enumerate() {
            self.min[k] = self.min[k].min(x);
            self.max[k] = self.max[k].max(x);
        }
    }

    /// Smallest box containing both.
    pub fn union(&self, o: &Aabb) -> Aabb {
        let mut b = *self;
        for k in 0..3 {
            b.min[k] = b.min[k].min(o.min[k]);
            b.max[k] = b.max[k].max(o.max[k]);
        }
        b
    }

    /// Whether `o` lies inside this box (inclusive).
    pub fn contains_box(&self, o: &Aabb) -> bool {
        (0..3).all(|k| self.min[k] <= o.min[k] && o.max[k] <= self.max[k])
    }

    /// Centroid `(min + max) * 0.5` in f32, as the kernels compute it.
    pub fn centroid(&self) -> [f32; 3] {
        [0, 1, 2].map(|k| (self.min[k] + self.max[k]) * 0.5)
    }

    /// Whether the boxes overlap once separated by at most `margin` (m) per axis:
    /// `a.min <= b.max + margin` and `b.min <= a.max + margin` on every axis (f32, as on the GPU).
    pub fn overlaps(&self, o: &Aabb, margin: f32) -> bool {
        (0..3).all(|k| self.min[k] <= o.max[k] + margin && o.min[k] <= self.max[k] + margin)
    }

    /// Whether `p` lies in the box (inclusive).
    pub fn contains_point(&self, p: [f32; 3]) -> bool {
        (0..3).all(|k| self.min[k] <= p[k] && p[k] <= self.max[k])
    }

    /// Squared distance from `p` to the box (m², 0 inside), f32 as on the GPU.
    pub fn sq_dist(&self, p: [f32; 3]) -> f32 {
        let mut s = 0.0f32;
        for (k, &x) in p.iter().enumerate() {
            let d = (self.min[k] - x).max(0.0).max(x - self.max[k]);
            s += d * d;
        }
        s
    }
}

/// Monotone map of f32 onto u32 (order-preserving), used for the atomic centroid bounds.
pub fn float_to_ordered(f: f32) -> u32 {
    let b = f.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Inverse of [`float_to_ordered`].
pub fn ordered_to_float(u: u32) -> f32 {
    f32::from_bits(if u & 0x8000_0000 != 0 {
        u & 0x7fff_ffff
    } else {
        !u
    })
}

/// Topology of a Karras binary radix tree over `n` sorted keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Children (node indices) of each internal node (`n - 1` entries).
    pub children: Vec<[u32; 2]>,
    /// Parent of every node (`2n - 1` entries; [`INVALID`] for the root).
    pub parent: Vec<u32>,
    /// First and last leaf (Morton order) under each internal node.
    pub ranges: Vec<[u32; 2]>,
}

/// A complete LBVH (what the GPU buffers hold after a build).
#[derive(Debug, Clone)]
pub struct Tree {
    /// Vertices per primitive (2 edges, 3 triangles, 4 tets).
    pub arity: usize,
    /// Morton bits per axis.
    pub bits_per_axis: u32,
    /// Sorted Morton codes (one per leaf).
    pub keys: Vec<u64>,
    /// Primitive of each leaf (Morton order).
    pub prims: Vec<u32>,
    /// Node links and leaf ranges.
    pub topology: Topology,
    /// Box of every node (`2n - 1`).
    pub boxes: Vec<Aabb>,
}

impl Tree {
    /// Number of primitives.
    pub fn len(&self) -> usize {
        self.prims.len()
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.prims.is_empty()
    }

    /// Node index of leaf `j`.
    pub fn leaf_node(&self, j: usize) -> usize {
        self.len() - 1 + j
    }

    /// Whether `node` is a leaf.
    pub fn is_leaf(&self, node: usize) -> bool {
        node + 1 >= self.len()
    }
}
