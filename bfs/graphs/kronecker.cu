typedef unsigned long long u64;
typedef long long i64;

#define MODULUS 0x7FFFFFFFULL
#define MAX_ROWS 64

__device__ __forceinline__ u64 mod_m(u64 x) {          // x < 2^61
    x = (x & MODULUS) + (x >> 31);
    return x >= MODULUS ? x - MODULUS : x;
}

struct State { u64 z[5]; };

__device__ __forceinline__ State step(State s) {
    State t;
    t.z[0] = mod_m(s.z[0] * 107374182ULL + s.z[4] * 104480ULL);
    t.z[1] = s.z[0]; t.z[2] = s.z[1]; t.z[3] = s.z[2]; t.z[4] = s.z[3];
    return t;
}

__device__ __forceinline__ State mat_vec(const u64* mat, const State& s) {
    State t;
#pragma unroll
    for (int i = 0; i < 5; ++i) {
        u64 acc = 0;
#pragma unroll
        for (int k = 0; k < 5; ++k) {
            u64 p = mat[i * 5 + k] * s.z[k];
            acc += (p & MODULUS) + (p >> 31);
        }
        t.z[i] = mod_m(acc);
    }
    return t;
}

__device__ __forceinline__ u64 scramble(u64 v, int label_shift, u64 key_sum, u64 mul0, u64 mul1) {
    v = (v + key_sum) * mul0;
    v = (__brevll(v) >> label_shift) * mul1;
    return __brevll(v) >> label_shift;
}

template <typename T>
__device__ void kron_edges(const u64* __restrict__ table, int n_rows, const u64* __restrict__ seed,
                           u64 start, i64 n_edges, int per_thread, int scale, u64 limit,
                           u64 key_sum, u64 mul0, u64 mul1, T* __restrict__ src_out,
                           T* __restrict__ dst_out)
{
    __shared__ u64 tab[MAX_ROWS * 25];
    for (int i = threadIdx.x; i < n_rows * 25; i += blockDim.x) tab[i] = table[i];
    __syncthreads();
    const int label_shift = 64 - scale;
    const i64 n_threads = (n_edges + per_thread - 1) / per_thread;
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < n_threads;
         t += (i64)gridDim.x * blockDim.x) {
        i64 lo = t * per_thread;
        i64 hi = lo + per_thread < n_edges ? lo + per_thread : n_edges;
        // skip the seed by (start + lo) * 2^64 steps
        State z;
        for (int k = 0; k < 5; ++k) z.z[k] = seed[k];
        u64 count = start + (u64)lo;
        for (int j = 0; count != 0 && j < n_rows; ++j, count >>= 1)
            if (count & 1ULL) z = mat_vec(tab + j * 25, z);
        for (i64 e = lo; e < hi; ++e) {
            State w = z;
            u64 s = 0, d = 0;
            for (int level = 0; level < scale; ++level) {
                w = step(w);
                while (w.z[0] < limit) w = step(w);
                unsigned int r = (unsigned int)w.z[0] % 10000u;
                bool is_d = r >= 9500u;
                bool sbit = (r >= 1900u && r < 3800u) || is_d;
                bool dbit = r < 1900u || is_d;
                bool flip = (s == d) && sbit && !dbit;   // (1,0) on the diagonal -> (0,1)
                s = (s << 1) | (u64)(sbit != flip);
                d = (d << 1) | (u64)(dbit != flip);
            }
            src_out[e] = (T)scramble(s, label_shift, key_sum, mul0, mul1);
            dst_out[e] = (T)scramble(d, label_shift, key_sum, mul0, mul1);
            z = mat_vec(tab, z);                           // next edge: A^(2^64)
        }
    }
}

extern "C" __global__ void kron_edges_u32(const u64* table, int n_rows, const u64* seed, u64 start,
        i64 n_edges, int per_thread, int scale, u64 limit, u64 key_sum, u64 mul0, u64 mul1,
        unsigned int* src_out, unsigned int* dst_out)
{
    kron_edges<unsigned int>(table, n_rows, seed, start, n_edges, per_thread, scale, limit,
                             key_sum, mul0, mul1, src_out, dst_out);
}

extern "C" __global__ void kron_edges_u64(const u64* table, int n_rows, const u64* seed, u64 start,
        i64 n_edges, int per_thread, int scale, u64 limit, u64 key_sum, u64 mul0, u64 mul1,
        u64* src_out, u64* dst_out)
{
    kron_edges<u64>(table, n_rows, seed, start, n_edges, per_thread, scale, limit,
                    key_sum, mul0, mul1, src_out, dst_out);
}
