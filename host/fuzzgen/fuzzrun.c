// SPDX-License-Identifier: Apache-2.0
//
// fuzzrun.c — runs one fuzz case on the reference and the backend under
// test and compares them (fuzzrun.h). Every dispatch goes through the
// conformance executor (vyre_conform_execute), so the fuzzer drives the
// one-shot, async, batch and resident paths exactly as `vyre conform` does,
// guard regions included.

#include "fuzzrun.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vyre_conform_buffer *fr_output(const vyre_conform_outcome *o, uint32_t bi) {
  for (uint32_t i = 0; i < o->output_count; i++)
    if (o->outputs[i].buffer_index == bi) return &o->outputs[i];
  return NULL;
}

uint32_t vyre_fuzzrun_compare(const vyre_conform_outcome *ref, const vyre_conform_outcome *o,
                              const char *label, char *msg, size_t cap) {
  msg[0] = '\0';
  if (ref->status != o->status) {
    snprintf(msg, cap, "%s: status %s%s%s, but the reference gave %s%s%s", label,
             vyre_status_name(o->status), o->status ? ": " : "", o->status ? o->error.message : "",
             vyre_status_name(ref->status), ref->status ? ": " : "",
             ref->status ? ref->error.message : "");
    return VYRE_FUZZRUN_DIFF_STATUS;
  }
  if (o->guard[0]) {
    snprintf(msg, cap, "%s: %s", label, o->guard);
    return VYRE_FUZZRUN_DIFF_GUARD;
  }
  if (o->status == VYRE_STATUS_TRAPPED) {
    if (o->result.trap_invocation != ref->result.trap_invocation ||
        o->result.trap_sites != ref->result.trap_sites ||
        o->result.trap_value != ref->result.trap_value) {
      snprintf(msg, cap,
               "%s: trap record invocation %llu sites 0x%x value %u, but the reference gave "
               "invocation %llu sites 0x%x value %u",
               label, (unsigned long long)o->result.trap_invocation, o->result.trap_sites,
               o->result.trap_value, (unsigned long long)ref->result.trap_invocation,
               ref->result.trap_sites, ref->result.trap_value);
      return VYRE_FUZZRUN_DIFF_TRAP;
    }
    return 0;
  }
  if (o->status != VYRE_STATUS_OK) return 0;
  char what[128];
  snprintf(what, sizeof what, "%s vs reference", label);
  for (uint32_t i = 0; i < ref->output_count; i++) {
    const vyre_conform_buffer *e = &ref->outputs[i];
    const vyre_conform_buffer *b = fr_output(o, e->buffer_index);
    if (!b) {
      snprintf(msg, cap, "%s: buffer '%s' was not returned", label, e->name);
      return VYRE_FUZZRUN_DIFF_OUTPUTS;
    }
    if (vyre_conform_compare_bytes(what, e->name, e->type, e->bytes, e->size, b->bytes, b->size,
                                   msg, cap))
      return VYRE_FUZZRUN_DIFF_OUTPUTS;
  }
  return 0;
}

uint32_t vyre_fuzzrun_case(const vyre_fuzzrun *r, const char *json, size_t len,
                           vyre_fuzzrun_result *out) {
  memset(out, 0, sizeof *out);
  vyre_error err = {.struct_size = sizeof err};
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_json(json, len, NULL, &c, &err);
  if (st || !c->program) {
    snprintf(out->message, sizeof out->message, "the case did not load: %s: %s",
             vyre_status_name(st ? st : c->program_status),
             st ? err.message : c->program_error.message);
    if (c) vyre_case_free(c);
    return out->verdict = VYRE_FUZZRUN_BAD_CASE;
  }
  vyre_conform_exec_options eo = {.path = VYRE_CONFORM_PATH_ONESHOT, .timeout_ns = r->timeout_ns};
  vyre_conform_execute(r->ref, c, &eo, &out->ref);
  out->have_ref = 1;
  out->c_ = c;
  out->ref_status = out->ref.status;
  if ((out->ref.status != VYRE_STATUS_OK && out->ref.status != VYRE_STATUS_TRAPPED) ||
      out->ref.guard[0]) {
    snprintf(out->message, sizeof out->message, "the reference failed: %s: %s",
             vyre_status_name(out->ref.status),
             out->ref.guard[0] ? out->ref.guard : out->ref.error.message);
    return out->verdict = VYRE_FUZZRUN_BAD_CASE;
  }
  uint32_t ran = 0;
  out->verdict = VYRE_FUZZRUN_PASS;
  for (uint32_t bit = 1; bit <= VYRE_CONFORM_PATH_ALL; bit <<= 1) {
    if (!(r->paths & bit)) continue;
    vyre_conform_exec_options po = {
        .path = bit, .compile_flags = r->compile_flags, .timeout_ns = r->timeout_ns};
    vyre_conform_outcome o;
    vyre_conform_execute(r->dev, c, &po, &o);
    if (o.status == VYRE_STATUS_TIMEOUT && r->timeout_ns &&
        out->retries < VYRE_FUZZRUN_MAX_RETRIES) {
      // fuzzrun.h VYRE_FUZZRUN_RETRY_FACTOR: the compile may have been in it.
      vyre_conform_outcome_free(&o);
      vyre_device_flush(r->dev, NULL);
      po.timeout_ns = r->timeout_ns > UINT64_MAX / VYRE_FUZZRUN_RETRY_FACTOR
                          ? UINT64_MAX
                          : r->timeout_ns * VYRE_FUZZRUN_RETRY_FACTOR;
      out->retries++;
      vyre_conform_execute(r->dev, c, &po, &o);
    }
    if (o.status == VYRE_STATUS_UNSUPPORTED && out->ref.status != VYRE_STATUS_UNSUPPORTED) {
      // A refusal is never a difference (docs/conformance.md): the backend
      // lacks what the program (or this path) needs.
      if (!ran) {
        out->path = bit;
        out->dev_status = o.status;
        snprintf(out->message, sizeof out->message, "%s: %s", vyre_conform_path_name(bit),
                 o.error.message);
      }
      vyre_conform_outcome_free(&o);
      continue;
    }
    ran++;
    uint32_t cls = vyre_fuzzrun_compare(&out->ref, &o, vyre_conform_path_name(bit), out->message,
                                        sizeof out->message);
    if (cls) {
      out->verdict = VYRE_FUZZRUN_DIFF;
      out->diff_class = cls;
      out->path = bit;
      out->dev_status = o.status;
      vyre_conform_outcome_free(&o);
      break;
    }
    vyre_conform_outcome_free(&o);
  }
  if (!ran && out->verdict == VYRE_FUZZRUN_PASS) out->verdict = VYRE_FUZZRUN_UNSUPPORTED;
  if (out->verdict == VYRE_FUZZRUN_PASS) out->message[0] = '\0';
  return out->verdict;
}

void vyre_fuzzrun_result_free(vyre_fuzzrun_result *res) {
  if (res->have_ref) vyre_conform_outcome_free(&res->ref);
  res->have_ref = 0;
  if (res->c_) vyre_case_free(res->c_);
  res->c_ = NULL;
}

char *vyre_fuzzrun_case_with_expect(const char *json, size_t len, const vyre_conform_outcome *ref,
                                    const char *description) {
  json_t *root = json_loadb(json, len, 0, NULL);
  if (!json_is_object(root)) {
    json_decref(root);
    return NULL;
  }
  if (description) json_object_set_new(root, "description", json_string(description));
  json_t *expect = json_object();
  if (ref->status == VYRE_STATUS_TRAPPED) {
    json_t *trap = json_object(), *sites = json_array();
    for (uint32_t s = 0; s < 32; s++)
      if (ref->result.trap_sites & (1u << s)) json_array_append_new(sites, json_integer(s));
    json_object_set_new(trap, "invocation", json_integer((json_int_t)ref->result.trap_invocation));
    json_object_set_new(trap, "sites", sites);
    if (ref->result.trap_value)
      json_object_set_new(trap, "value", json_integer((json_int_t)ref->result.trap_value));
    json_object_set_new(expect, "trap", trap);
  } else {
    for (uint32_t i = 0; i < ref->output_count; i++) {
      const vyre_conform_buffer *b = &ref->outputs[i];
      json_t *words = json_array();
      // Elements of the buffer's type, as bit strings of its width
      // (docs/case-files.md; narrow types: docs/ir.md IR-STORE-10).
      uint32_t eb = vyre_ir_type_bytes(b->type) ? vyre_ir_type_bytes(b->type) : 4u;
      for (uint64_t j = 0; j + eb <= b->size; j += eb) {
        uint32_t w = 0;
        for (uint32_t k = 0; k < eb; k++)
          w |= (uint32_t)b->bytes[j + k] << (8 * k);
        char hex[16];
        snprintf(hex, sizeof hex, "0x%0*x", (int)(2 * eb), w);
        json_array_append_new(words, json_string(hex));
      }
      json_object_set_new(expect, b->name, words);
    }
  }
  json_object_set_new(root, "expect", expect);
  char *text = json_dumps(root, JSON_INDENT(1));
  json_decref(root);
  return text;
}
