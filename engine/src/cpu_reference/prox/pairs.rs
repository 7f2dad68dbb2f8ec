//! Supple's proximity pairs as PROX contacts, the reference of
//! `kernels/prox/pair_contacts.comp` ([`crate::contact::prox::solver`]): the exact closest points of a
//! vertex–triangle or edge–edge pair (`Closest::weights`, Σ w x = closest-point difference) give
//! the weights, the unit difference the normal (from the second primitive toward the first) and
//! the distance the gap. A pair at distance 0 (already touching) has no normal and becomes an
//! inactive contact (no nodes) so indices stay aligned.

#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::contact::prox::model::Contact;
use crate::cpu_reference::distance::{edge_edge, point_triangle};
use crate::math::Vec3;
use crate::proximity::{ProximityMesh, ProximityPairs};

/// Whether a proximity pair is vertex–triangle or edge–edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairKind {
    /// Nodes `[vertex, t0, t1, t2]`.
    VertexTriangle,
    /// Nodes `[a0, a1, b0, b1]`.
    EdgeEdge,
}

/// An inactive contact (no nodes): it never receives an impulse.
pub fn inactive_contact(mu: f64) -> Contact {
    Contact::new(&[], &[], Vec3::new(0.0, 0.0, 1.0), mu, 0.0)
}

/// The contact of one proximity pair at positions `x`: weights from the exact closest points,
/// normal from the second primitive toward the first, gap = distance; inactive at distance 0.
pub fn pair_contact(kind: PairKind, nodes: [u32; 4], x: &[Vec3], mu: f64) -> Contact {
    let q = nodes.map(|i| x[i as usize]);
    let (w, diff) = match kind {
        PairKind::VertexTriangle => {
            let c = point_triangle(&q[0], &q[1], &q[2], &q[3]);
            (c.weights, c.diff)
        }
        PairKind::EdgeEdge => {
            let c = edge_edge(&q[0], &q[1], &q[2], &q[3]);
            (c.weights, c.diff)
        }
    };
    let d = diff.norm();
    if !(d > 0.0) {
        return inactive_contact(mu);
    }
    Contact::new(&nodes, &w, diff / d, mu, d)
}

/// Contacts of every pair of a proximity search over `mesh` (vertex–triangle pairs first, then
/// edge–edge, in the lists' order).
pub fn pairs_to_contacts(
    pairs: &ProximityPairs,
    mesh: &ProximityMesh,
    x: &[Vec3],
    mu: f64,
) -> Vec<Contact> {
    let vt = pairs.vertex_triangle.iter().map(|p| {
        let t = mesh.triangles[p.b as usize];
        pair_contact(PairKind::VertexTriangle, [p.a, t[0], t[1], t[2]], x, mu)
    });
    let ee = pairs.edge_edge.iter().map(|p| {
        let (a, b) = (mesh.edges[p.a as usize], mesh.edges[p.b as usize]);
        pair_contact(PairKind::EdgeEdge, [a[0], a[1], b[0], b[1]], x, mu)
    });
    vt.chain(ee).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::prox::model::NO_NODE;

    #[test]
    fn pair_contacts_carry_closest_point_weights() {
        let x = vec![
            Vec3::new(0.2, 0.3, 0.01),
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        let c = pair_contact(PairKind::VertexTriangle, [0, 1, 2, 3], &x, 0.3);
        assert!((c.normal - Vec3::new(0.0, 0.0, 1.0)).norm() < 1e-12);
        assert!((c.gap - 0.01).abs() < 1e-12);
        // Σ w x = closest point difference = gap · n.
        let rel: Vec3 = (0..4).map(|k| x[c.nodes[k] as usize] * c.weights[k]).sum();
        assert!((rel - c.normal * c.gap).norm() < 1e-12);
        let touching = pair_contact(PairKind::VertexTriangle, [1, 1, 2, 3], &x, 0.3);
        assert!(touching.nodes.iter().all(|&n| n == NO_NODE));
    }
}
