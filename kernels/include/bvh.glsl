// Shared helpers of the LBVH kernels (kernels/bvh/*.comp; host: engine/src/bvh/;
// reference: engine/src/cpu_reference/bvh.rs).
//
// Node numbering: internal nodes 0..n-2 (root 0), leaf j (j-th primitive in Morton order) is node
// n-1+j; with n == 1 the root is the single leaf (node 0). Node boxes are two vec4 per node
// (min, max; w unused). Traversal stacks hold BVH_STACK entries: Karras nodes strictly lengthen
// the common key prefix (at most 64 key bits + 32 index bits) going down, so a tree is at most
// 97 levels deep and a depth-first stack never needs more than 98 entries.
#ifndef SUPPLE_BVH_GLSL
#define SUPPLE_BVH_GLSL

const uint BVH_INVALID = 0xFFFFFFFFu;
#define BVH_STACK 128

// Flat invocation index over a 2D grid of workgroups (x up to 65535 groups).
uint bvh_thread_index() {
    return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG + gl_LocalInvocationID.x;
}

// Boxes overlap once separated by at most m per axis (same f32 operations as the reference).
bool bvh_overlap(vec3 amin, vec3 amax, vec3 bmin, vec3 bmax, float m) {
    return all(lessThanEqual(amin, bmax + vec3(m))) && all(lessThanEqual(bmin, amax + vec3(m)));
}

bool bvh_contains_point(vec3 bmin, vec3 bmax, vec3 p) {
    return all(lessThanEqual(bmin, p)) && all(lessThanEqual(p, bmax));
}

// Squared distance from p to a box (0 inside).
float bvh_box_sq_dist(vec3 bmin, vec3 bmax, vec3 p) {
    vec3 d = max(max(bmin - p, vec3(0.0)), p - bmax);
    precise float s = d.x * d.x;
    s = s + d.y * d.y;
    s = s + d.z * d.z;
    return s;
}

#endif
