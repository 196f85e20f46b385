#!/usr/bin/env bash
# Nsight Compute on the real models and on kreplay's replays of the same
# ops: duration, DRAM bytes and L2 hit rates with the caches and clocks as
# they are (results/h100/tier3-primed/ncu). Run from the project root on
# the GPU machine with KREPLAY=path/to/kreplay; writes under ${OUT:-out}/n.
set -uo pipefail
OUT=${OUT:-out}; K=${KREPLAY:-kreplay}; D=$(dirname "$0")
mkdir -p "$OUT/n"
MET=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
NCU="ncu --cache-control none --clock-control none --metrics $MET --csv"
$NCU --profile-from-start off --kernel-name-base function -k elementwise_kernel --launch-count 16 python3 "$D/bloom_ncu.py" prefill > "$OUT/n/torch_prefill.csv"
$NCU --profile-from-start off --kernel-name-base function -k regex:'CatArrayBatchedCopy|reduce_kernel' --launch-count 16 python3 "$D/bloom_ncu.py" decode > "$OUT/n/torch_decode.csv"
$NCU --profile-from-start off --kernel-name-base function -k regex:'unrolled_elementwise_kernel|reduce_kernel|vectorized_elementwise_kernel' --launch-count 14 python3 "$D/model_ncu.py" llama > "$OUT/n/torch_llama.csv"
$NCU --profile-from-start off --kernel-name-base function -k regex:softmax --launch-count 3 python3 "$D/model_ncu.py" bloom > "$OUT/n/torch_bloom.csv"
for c in primed warm; do
  for id in 3b90c9320456 4129aa360618 823849f76925 28025d88ba68; do
    $NCU -k regex:'kr_ew_pt|kr_reduce_pt' --launch-skip 20 --launch-count 2 "$K" run -tiers 3 -cache $c -budget 30ms -ids $id embedded:h100_llama-7b_prefill.trace.json.gz > "$OUT/n/ours_llama_${c}_$id.csv"
  done
  for id in ead9ce6de968 df084478313f; do
    $NCU -k regex:'kr_ew_pt|sm_pt' --launch-skip 20 --launch-count 2 "$K" run -tiers 3 -cache $c -budget 30ms -ids $id embedded:h100_bloom-560m_prefill.trace.json.gz > "$OUT/n/ours_bloom_${c}_$id.csv"
  done
done
