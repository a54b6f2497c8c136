// nvrtc-arch: compute_80
// A partitioned cuda::pipeline (cuda::make_pipeline with producer and consumer roles): warp 1
// copies input words into a two-stage shared buffer with cuda::memcpy_async, warp 0 waits for
// each stage, sums it and releases it. Only the consumers wait for the copies, only the
// producers for free stages. Launch: 64 threads per CTA (of any shape: the thread rank
// decides).
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void pipeline_producer_consumer(const int *in, int *out)
{
    constexpr int stages = 2;
    __shared__ int buf[stages][32];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
    auto block = cg::this_thread_block();
    const unsigned rank = block.thread_rank();
    const bool producer = rank >= 32;
    auto role = producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
    auto pipe = cuda::make_pipeline(block, &state, role);
    unsigned t = rank & 31;
    int base = blockIdx.x * block.size();
    int acc = 0;
    for (int i = 0; i < 4; i++) {
        int s = i % stages;
        if (producer) {
            pipe.producer_acquire();
            cuda::memcpy_async(&buf[s][t], &in[base + (i * 32 + t) % 64], sizeof(int), pipe);
            pipe.producer_commit();
        } else {
            pipe.consumer_wait();
            acc += buf[s][(t + i) & 31] * (i + 1);
            pipe.consumer_release();
        }
    }
    out[base + rank] = acc;
    // The pipeline's destructor (the last thread out invalidates its mbarriers) is ordered
    // after every thread's use by CCCL's fence and counter; ir::eval's race model does not
    // follow that chain through the warp leaders, so the CTA meets here first.
    block.sync();
}
