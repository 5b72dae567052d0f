// SPDX-License-Identifier: Apache-2.0
//
// abi_layout_list.h — the public structs of abi/vyre/vyre_backend.h and
// host/include/vyre/vyre.h, one X-macro line each, with a field near the
// end of each. abi_layout_c.c and abi_layout_cxx.cpp expand it in their own
// language; test_abi_headers compares the sizes, alignments and offsets, so
// a header that lays a struct out differently in C++ fails.

VYRE_LAYOUT(vyre_error, message)
VYRE_LAYOUT(vyre_ext_header, next)
VYRE_LAYOUT(vyre_host_services, struct_size)
VYRE_LAYOUT(vyre_probe_result, reason)
VYRE_LAYOUT(vyre_create_args, struct_size)
VYRE_LAYOUT(vyre_caps, struct_size)
VYRE_LAYOUT(vyre_ir_node, kind)
VYRE_LAYOUT(vyre_ir_buffer, binding)
VYRE_LAYOUT(vyre_ir_local, type)
VYRE_LAYOUT(vyre_ir_program, buffers)
VYRE_LAYOUT(vyre_compile_args, program)
VYRE_LAYOUT(vyre_binding, buffer_index)
VYRE_LAYOUT(vyre_dispatch_args, module)
VYRE_LAYOUT(vyre_ext_grid_offset, flags)
VYRE_LAYOUT(vyre_dispatch_result, struct_size)
VYRE_LAYOUT(vyre_batch_job, status)
VYRE_LAYOUT(vyre_buffer_range, buffer)
VYRE_LAYOUT(vyre_sequence_args, struct_size)
VYRE_LAYOUT(vyre_health, generation)
VYRE_LAYOUT(vyre_metric, value)
VYRE_LAYOUT(vyre_object_header, generation)
VYRE_LAYOUT(vyre_backend_ops, recover)
VYRE_LAYOUT(vyre_backend_ops, inject_fault)
VYRE_LAYOUT(vyre_backend_ops, ring_close)
VYRE_LAYOUT(vyre_ring_args, label)
VYRE_LAYOUT(vyre_ring_completion, result)
VYRE_LAYOUT(vyre_candidate, reason)
VYRE_LAYOUT(vyre_compile_options, label)
VYRE_LAYOUT(vyre_resident_range, dst)
VYRE_LAYOUT(vyre_arg, resident)
VYRE_LAYOUT(vyre_dispatch_options, label)
VYRE_LAYOUT(vyre_batch_item, error)
VYRE_LAYOUT(vyre_sequence_step, options)
VYRE_LAYOUT(vyre_queue_output, size)
