export VYRE_COMMIT=e5e196d
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVYRE_BUILD_CUDA=ON >/dev/null && cmake --build build-gpu -j16 --target vyre-mathcheck vyre-cli vyre-backend-cpu vyre-backend-cuda vyre-backend-vulkan >/dev/null 2>&1; echo built $SECONDS
export VYRE_PLUGIN_PATH=$PWD/build-gpu/lib VYRE_CACHE_DIR=$PWD/build-gpu/cache
SWITCHES="VYRE_VULKAN_LOOP_STORES=0 VYRE_VULKAN_LOOP_STORES=all VYRE_VULKAN_LOOP_COUNTED=0" bash ci/gpu-findings.sh vulkan tests/fuzzgen/open tests/conformance/cases/control/loop_store_same_index.json tests/conformance/cases/control/loop_store_same_index_each.json 2>&1 | tee $OUT/findings.txt; echo findings $SECONDS
(timeout 200 ./build-gpu/bin/vyre conform --backend cuda --require-device --quiet > $OUT/conform-cuda.txt 2>&1; echo "cuda rc $?" >> $OUT/conform-cuda.txt) &
(timeout 200 ./build-gpu/bin/vyre conform --backend vulkan --require-device --quiet > $OUT/conform-vulkan.txt 2>&1; echo "vulkan rc $?" >> $OUT/conform-vulkan.txt) &
wait; tail -2 $OUT/conform-cuda.txt $OUT/conform-vulkan.txt; echo conform $SECONDS
./build-gpu/bin/vyre bench --backend cuda --filter cold_compile,stencil --json $OUT/bench-cuda.json 2>&1 | grep -E "^ *[0-9]+ |cold" | head -6; echo bench $SECONDS
for b in cuda vulkan; do for f in exp exp2 log log2 rsqrt tanh sin cos; do
  [ $SECONDS -gt 560 ] && { echo "stop before $b $f"; break 2; }
  s=$SECONDS; r=$(timeout $((590-SECONDS)) ./build-gpu/bin/vyre-mathcheck --backend $b --fn $f --threads 16 2>&1 | tail -1); echo "$b $f $((SECONDS-s))s: $r" | tee -a $OUT/math.txt
done; done; echo end $SECONDS
