/*
 * Node-API addon: a thin link between Node and Eclipse Cyclone DDS (libddsc)
 * for the Unitree G1 low-level topics (LowCmd_, LowState_) and Unitree's
 * request/response service types (unitree_api Request_, Response_).
 *
 * Contract:
 * - LowCmd_/LowState_ samples cross the boundary as the packed little-endian C
 *   struct bytes of the idlc-generated types (1004 bytes for LowCmd_, 2092 for
 *   LowState_): the same layout unitree_sdk2 computes its CRC over. The static
 *   assertions below pin that layout at build time.
 * - Request_/Response_ samples cross as plain objects (the header's integers,
 *   int64 as BigInt; the text field as a JS string; binary as bytes). Their
 *   string and sequence are unbounded in the type (as Unitree publishes it), so
 *   this addon bounds them: a write above API_TEXT_MAX / API_BINARY_MAX bytes,
 *   or a text with an embedded NUL, is refused with a TypeError naming the
 *   field; a received sample above them is dropped and counted (`oversize`).
 * - A reader's data arrives on a Cyclone thread (a listener); it is taken there,
 *   stamped with CLOCK_MONOTONIC at receipt (the clock of process.hrtime) and
 *   handed to JS through a thread-safe function whose queue is bounded: a
 *   sample that finds the queue full is dropped and counted, never blocks DDS.
 * - No RTPS or CDR is implemented here: serialization, discovery and transport
 *   are Cyclone's.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <dlfcn.h>
#include <node_api.h>
#include <dds/dds.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unitree_api.h"
#include "unitree_hg.h"

typedef unitree_hg_msg_dds__LowCmd_ LowCmd;
typedef unitree_hg_msg_dds__LowState_ LowState;
typedef unitree_api_msg_dds__Request_ ApiRequest;
typedef unitree_api_msg_dds__Response_ ApiResponse;

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the sample bytes are the little-endian C layout; a big-endian host is not supported"
#endif
_Static_assert(sizeof(unitree_hg_msg_dds__MotorCmd_) == 28, "MotorCmd_ is 28 bytes");
_Static_assert(sizeof(LowCmd) == 1004, "LowCmd_ is 1004 bytes");
_Static_assert(offsetof(LowCmd, motor_cmd) == 4, "LowCmd_.motor_cmd at 4");
_Static_assert(offsetof(LowCmd, reserve) == 984, "LowCmd_.reserve at 984");
_Static_assert(offsetof(LowCmd, crc) == 1000, "LowCmd_.crc at 1000");
_Static_assert(sizeof(unitree_hg_msg_dds__IMUState_) == 56, "IMUState_ is 56 bytes");
_Static_assert(sizeof(unitree_hg_msg_dds__MotorState_) == 56, "MotorState_ is 56 bytes");
_Static_assert(sizeof(LowState) == 2092, "LowState_ is 2092 bytes");
_Static_assert(offsetof(LowState, tick) == 12, "LowState_.tick at 12");
_Static_assert(offsetof(LowState, imu_state) == 16, "LowState_.imu_state at 16");
_Static_assert(offsetof(LowState, motor_state) == 72, "LowState_.motor_state at 72");
_Static_assert(offsetof(LowState, wireless_remote) == 2032, "LowState_.wireless_remote at 2032");
_Static_assert(offsetof(LowState, crc) == 2088, "LowState_.crc at 2088");

enum { KIND_LOWCMD = 0, KIND_LOWSTATE = 1, KIND_API_REQUEST = 2, KIND_API_RESPONSE = 3 };
#define KIND_VALID(k) ((k) >= KIND_LOWCMD && (k) <= KIND_API_RESPONSE)
#define KIND_IS_API(k) ((k) == KIND_API_REQUEST || (k) == KIND_API_RESPONSE)
/* Bounds on Request_.parameter / Response_.data (UTF-8 bytes) and on .binary: a service's JSON
 * answer is a few hundred bytes; these leave room without letting one sample hold the heap. */
#define API_TEXT_MAX 65536
#define API_BINARY_MAX 65536
#define READER_QUEUE_MAX 256
#define TYPE_NAME_MAX 256
#define TOPIC_NAME_MAX 256

/* The header fields of a Request_ or Response_ (lease/priority/noreply: Request_ only; code:
 * Response_ only). */
typedef struct {
  int64_t identity_id;
  int64_t api_id;
  int64_t lease_id;
  int32_t priority;
  int32_t code;
  int noreply;
  size_t text_len;
  size_t binary_len;
} api_fields_t;

typedef struct {
  int kind;
  uint64_t receipt_ns;
  int64_t source_ns;
  size_t size;
  api_fields_t api; /* api kinds: bytes[] holds text_len text bytes, then binary_len binary bytes */
  unsigned char bytes[];
} delivery_t;

typedef struct {
  napi_threadsafe_function tsfn;
  dds_entity_t reader;
  dds_topic_descriptor_t *desc;
  int kind;
  size_t size;
  atomic_uint_fast64_t received;
  atomic_uint_fast64_t dropped;
  atomic_uint_fast64_t oversize;
  int closed;
} reader_ctx_t;

static size_t sample_size(int kind) {
  switch (kind) {
    case KIND_LOWCMD: return sizeof(LowCmd);
    case KIND_LOWSTATE: return sizeof(LowState);
    case KIND_API_REQUEST: return sizeof(ApiRequest);
    default: return sizeof(ApiResponse);
  }
}

static const char *kind_name(int kind) {
  switch (kind) {
    case KIND_LOWCMD: return "LowCmd_";
    case KIND_LOWSTATE: return "LowState_";
    case KIND_API_REQUEST: return "Request_";
    default: return "Response_";
  }
}

static const dds_topic_descriptor_t *base_desc(int kind) {
  switch (kind) {
    case KIND_LOWCMD: return &unitree_hg_msg_dds__LowCmd__desc;
    case KIND_LOWSTATE: return &unitree_hg_msg_dds__LowState__desc;
    case KIND_API_REQUEST: return &unitree_api_msg_dds__Request__desc;
    default: return &unitree_api_msg_dds__Response__desc;
  }
}

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static napi_value throw_dds(napi_env env, const char *what, dds_return_t rc) {
  char msg[256];
  snprintf(msg, sizeof msg, "dds: %s failed: %s", what, dds_strretcode(rc));
  napi_throw_error(env, "DDS_ERROR", msg);
  return NULL;
}

static napi_value throw_arg(napi_env env, const char *msg) {
  napi_throw_type_error(env, "DDS_ARGUMENT", msg);
  return NULL;
}

#define CHECK_NAPI(call)                                                                                               \
  do {                                                                                                                 \
    if ((call) != napi_ok) return throw_arg(env, "dds: Node-API call failed: " #call);                              \
  } while (0)

static int get_i32(napi_env env, napi_value v, int32_t *out) { return napi_get_value_int32(env, v, out) == napi_ok; }

/* Reads an optional string argument; returns 1 with out[0]=0 when undefined/null. */
static int get_opt_string(napi_env env, napi_value v, char *out, size_t cap) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok) return 0;
  if (t == napi_undefined || t == napi_null) {
    out[0] = 0;
    return 1;
  }
  if (t != napi_string) return 0;
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok || len + 1 > cap) return 0;
  return napi_get_value_string_utf8(env, v, out, cap, &len) == napi_ok;
}

/* A descriptor for `kind`, optionally under another type name and optionally
 * without XTypes type information (as a peer without type discovery sends). */
static dds_topic_descriptor_t *make_desc(int kind, const char *type_name, int with_type_info) {
  dds_topic_descriptor_t *d = malloc(sizeof *d);
  if (!d) return NULL;
  /* The descriptor's scalar fields are const-qualified: copy bytes, then patch. */
  memcpy(d, base_desc(kind), sizeof *d);
  if (type_name && type_name[0]) {
    char *copy = strdup(type_name);
    if (!copy) {
      free(d);
      return NULL;
    }
    d->m_typename = copy;
  }
  if (!with_type_info) {
    d->type_information.data = NULL;
    d->type_information.sz = 0;
    d->type_mapping.data = NULL;
    d->type_mapping.sz = 0;
    uint32_t flags = base_desc(kind)->m_flagset & ~(uint32_t)DDS_TOPIC_XTYPES_METADATA;
    memcpy((char *)d + offsetof(dds_topic_descriptor_t, m_flagset), &flags, sizeof flags);
  }
  return d;
}

static void free_desc(dds_topic_descriptor_t *d, int kind) {
  if (!d) return;
  if (d->m_typename != base_desc(kind)->m_typename) free((void *)d->m_typename);
  free(d);
}

/* createParticipant(domainId, configXml) -> { participant, domain }
 * domain is 0 when the domain already existed in this process (its first
 * configuration stays in force). */
static napi_value create_participant(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t domain_id;
  if (argc < 2 || !get_i32(env, argv[0], &domain_id) || domain_id < 0 || domain_id > 232)
    return throw_arg(env, "dds: createParticipant(domainId 0..232, configXml)");
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[1], NULL, 0, &len) != napi_ok || len > 65536)
    return throw_arg(env, "dds: configXml must be a string of at most 65536 bytes");
  char *xml = malloc(len + 1);
  if (!xml) return throw_arg(env, "dds: out of memory");
  napi_get_value_string_utf8(env, argv[1], xml, len + 1, &len);
  dds_entity_t domain = dds_create_domain((dds_domainid_t)domain_id, xml);
  free(xml);
  if (domain < 0 && domain != DDS_RETCODE_PRECONDITION_NOT_MET) return throw_dds(env, "create_domain", domain);
  dds_entity_t participant = dds_create_participant((dds_domainid_t)domain_id, NULL, NULL);
  if (participant < 0) {
    if (domain > 0) dds_delete(domain);
    return throw_dds(env, "create_participant", participant);
  }
  napi_value out, p, d;
  CHECK_NAPI(napi_create_object(env, &out));
  CHECK_NAPI(napi_create_int32(env, participant, &p));
  CHECK_NAPI(napi_create_int32(env, domain > 0 ? domain : 0, &d));
  CHECK_NAPI(napi_set_named_property(env, out, "participant", p));
  CHECK_NAPI(napi_set_named_property(env, out, "domain", d));
  return out;
}

/* deleteEntity(handle): dds_delete (children go with their parent). */
static napi_value delete_entity(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t h;
  if (argc < 1 || !get_i32(env, argv[0], &h) || h <= 0) return throw_arg(env, "dds: deleteEntity(handle)");
  dds_return_t rc = dds_delete(h);
  if (rc < 0 && rc != DDS_RETCODE_BAD_PARAMETER && rc != DDS_RETCODE_ALREADY_DELETED)
    return throw_dds(env, "delete", rc);
  return NULL;
}

typedef struct {
  int32_t participant;
  int32_t kind;
  char topic[TOPIC_NAME_MAX];
  char type_name[TYPE_NAME_MAX];
  int with_type_info;
} endpoint_args_t;

/* (participant, kind 0..3, topicName, typeName|null, withTypeInfo) */
static int parse_endpoint_args(napi_env env, napi_value *argv, size_t argc, endpoint_args_t *a) {
  if (argc < 5) return 0;
  if (!get_i32(env, argv[0], &a->participant) || a->participant <= 0) return 0;
  if (!get_i32(env, argv[1], &a->kind) || !KIND_VALID(a->kind)) return 0;
  if (!get_opt_string(env, argv[2], a->topic, sizeof a->topic) || !a->topic[0]) return 0;
  if (!get_opt_string(env, argv[3], a->type_name, sizeof a->type_name)) return 0;
  bool b;
  if (napi_get_value_bool(env, argv[4], &b) != napi_ok) return 0;
  a->with_type_info = b ? 1 : 0;
  return 1;
}

/* Writers: reliable (a reliable writer also matches a reader that asks for reliability);
 * LowCmd_/LowState_ keep-last 1 (a newer command replaces an unsent older one), Request_/Response_
 * keep-last 8 (each is a separate question or answer). */
static napi_value create_writer(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  endpoint_args_t a;
  if (!parse_endpoint_args(env, argv, argc, &a))
    return throw_arg(env, "dds: createWriter(participant, kind 0..3, topic, typeName|null, withTypeInfo)");
  /* The descriptor must outlive the topic; a writer's lives as long as the process
   * (one per endpoint, a few hundred bytes). */
  dds_topic_descriptor_t *desc = make_desc(a.kind, a.type_name, a.with_type_info);
  if (!desc) return throw_arg(env, "dds: out of memory");
  dds_entity_t topic = dds_create_topic(a.participant, desc, a.topic, NULL, NULL);
  if (topic < 0) {
    free_desc(desc, a.kind);
    return throw_dds(env, "create_topic", topic);
  }
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_MSECS(10));
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, KIND_IS_API(a.kind) ? 8 : 1);
  dds_entity_t writer = dds_create_writer(a.participant, topic, qos, NULL);
  dds_delete_qos(qos);
  if (writer < 0) return throw_dds(env, "create_writer", writer);
  napi_value out;
  CHECK_NAPI(napi_create_int32(env, writer, &out));
  return out;
}

/* write(writer, kind, bytes): bytes are exactly the C struct of `kind`. */
static napi_value write_sample(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t writer, kind;
  if (argc < 3 || !get_i32(env, argv[0], &writer) || !get_i32(env, argv[1], &kind) ||
      (kind != KIND_LOWCMD && kind != KIND_LOWSTATE))
    return throw_arg(env, "dds: write(writer, kind 0|1, bytes) (Request_/Response_: writeApi)");
  bool is_ta = false;
  napi_is_typedarray(env, argv[2], &is_ta);
  if (!is_ta) return throw_arg(env, "dds: write: bytes must be a Uint8Array");
  napi_typedarray_type tt;
  size_t length;
  void *data;
  CHECK_NAPI(napi_get_typedarray_info(env, argv[2], &tt, &length, &data, NULL, NULL));
  if (tt != napi_uint8_array || length != sample_size(kind)) {
    char msg[128];
    snprintf(msg, sizeof msg, "dds: write: %s sample must be %zu bytes, got %zu", kind_name(kind), sample_size(kind),
             length);
    return throw_arg(env, msg);
  }
  union {
    LowCmd cmd;
    LowState state;
  } sample;
  memcpy(&sample, data, length);
  dds_return_t rc = dds_write(writer, &sample);
  if (rc < 0) return throw_dds(env, "write", rc);
  return NULL;
}

/* A BigInt (or an integral Number) that fits int64. */
static int get_i64(napi_env env, napi_value v, int64_t *out) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok) return 0;
  if (t == napi_bigint) {
    bool lossless = false;
    return napi_get_value_bigint_int64(env, v, out, &lossless) == napi_ok && lossless;
  }
  if (t != napi_number) return 0;
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || d != (double)(int64_t)d) return 0;
  *out = (int64_t)d;
  return 1;
}

static napi_value named(napi_env env, napi_value obj, const char *name) {
  napi_value v = NULL;
  if (napi_get_named_property(env, obj, name, &v) != napi_ok) return NULL;
  return v;
}

static napi_value throw_field(napi_env env, int kind, const char *field, const char *what) {
  char msg[256];
  snprintf(msg, sizeof msg, "dds: writeApi: %s.%s %s", kind_name(kind), field, what);
  return throw_arg(env, msg);
}

/* writeApi(writer, kind 2|3, sample)
 * Request_ sample: { identityId, apiId, leaseId: bigint, priority: int32, noreply: boolean,
 *                    parameter: string, binary: Uint8Array }
 * Response_ sample: { identityId, apiId: bigint, code: int32, data: string, binary: Uint8Array } */
static napi_value write_api(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t writer, kind;
  napi_valuetype ot;
  if (argc < 3 || !get_i32(env, argv[0], &writer) || !get_i32(env, argv[1], &kind) || !KIND_IS_API(kind) ||
      napi_typeof(env, argv[2], &ot) != napi_ok || ot != napi_object)
    return throw_arg(env, "dds: writeApi(writer, kind 2|3, sample object)");
  const int req = kind == KIND_API_REQUEST;
  int64_t identity_id, api_id, lease_id = 0;
  int32_t priority = 0, code = 0;
  bool noreply = false;
  if (!get_i64(env, named(env, argv[2], "identityId"), &identity_id))
    return throw_field(env, kind, "header.identity.id (identityId)", "must be an int64 BigInt");
  if (!get_i64(env, named(env, argv[2], "apiId"), &api_id))
    return throw_field(env, kind, "header.identity.api_id (apiId)", "must be an int64 BigInt");
  if (req) {
    if (!get_i64(env, named(env, argv[2], "leaseId"), &lease_id))
      return throw_field(env, kind, "header.lease.id (leaseId)", "must be an int64 BigInt");
    if (!get_i32(env, named(env, argv[2], "priority"), &priority))
      return throw_field(env, kind, "header.policy.priority (priority)", "must be an int32");
    if (napi_get_value_bool(env, named(env, argv[2], "noreply"), &noreply) != napi_ok)
      return throw_field(env, kind, "header.policy.noreply (noreply)", "must be a boolean");
  } else if (!get_i32(env, named(env, argv[2], "code"), &code))
    return throw_field(env, kind, "header.status.code (code)", "must be an int32");
  const char *text_field = req ? "parameter" : "data";
  napi_value text_v = named(env, argv[2], text_field);
  napi_valuetype tt;
  size_t text_len = 0;
  if (!text_v || napi_typeof(env, text_v, &tt) != napi_ok || tt != napi_string ||
      napi_get_value_string_utf8(env, text_v, NULL, 0, &text_len) != napi_ok)
    return throw_field(env, kind, text_field, "must be a string");
  if (text_len > API_TEXT_MAX) return throw_field(env, kind, text_field, "is longer than 65536 UTF-8 bytes");
  napi_value bin_v = named(env, argv[2], "binary");
  bool is_ta = false;
  napi_typedarray_type bt;
  size_t bin_len = 0;
  void *bin_data = NULL;
  if (!bin_v || napi_is_typedarray(env, bin_v, &is_ta) != napi_ok || !is_ta ||
      napi_get_typedarray_info(env, bin_v, &bt, &bin_len, &bin_data, NULL, NULL) != napi_ok || bt != napi_uint8_array)
    return throw_field(env, kind, "binary", "must be a Uint8Array");
  if (bin_len > API_BINARY_MAX) return throw_field(env, kind, "binary", "is longer than 65536 bytes");
  char *text = malloc(text_len + 1);
  if (!text) return throw_arg(env, "dds: out of memory");
  napi_get_value_string_utf8(env, text_v, text, text_len + 1, &text_len);
  if (strlen(text) != text_len) {
    free(text);
    return throw_field(env, kind, text_field, "contains a NUL character (a CDR string ends at the first)");
  }
  dds_sequence_octet seq = {(uint32_t)bin_len, (uint32_t)bin_len, (uint8_t *)bin_data, false};
  dds_return_t rc;
  if (req) {
    ApiRequest s;
    memset(&s, 0, sizeof s);
    s.header.identity.id = identity_id;
    s.header.identity.api_id = api_id;
    s.header.lease.id = lease_id;
    s.header.policy.priority = priority;
    s.header.policy.noreply = noreply;
    s.parameter = text;
    s.binary = seq;
    rc = dds_write(writer, &s);
  } else {
    ApiResponse s;
    memset(&s, 0, sizeof s);
    s.header.identity.id = identity_id;
    s.header.identity.api_id = api_id;
    s.header.status.code = code;
    s.data = text;
    s.binary = seq;
    rc = dds_write(writer, &s);
  }
  free(text);
  if (rc < 0) return throw_dds(env, "write", rc);
  return NULL;
}

/* Takes one Request_/Response_ into a delivery, or NULL (oversize: counted; out of memory: dropped). */
static delivery_t *api_delivery(reader_ctx_t *ctx, void *sample) {
  api_fields_t f;
  memset(&f, 0, sizeof f);
  const char *text;
  const dds_sequence_octet *bin;
  if (ctx->kind == KIND_API_REQUEST) {
    const ApiRequest *r = sample;
    f.identity_id = r->header.identity.id;
    f.api_id = r->header.identity.api_id;
    f.lease_id = r->header.lease.id;
    f.priority = r->header.policy.priority;
    f.noreply = r->header.policy.noreply ? 1 : 0;
    text = r->parameter;
    bin = &r->binary;
  } else {
    const ApiResponse *r = sample;
    f.identity_id = r->header.identity.id;
    f.api_id = r->header.identity.api_id;
    f.code = r->header.status.code;
    text = r->data;
    bin = &r->binary;
  }
  f.text_len = text ? strnlen(text, API_TEXT_MAX + 1) : 0;
  f.binary_len = bin->_buffer ? bin->_length : 0;
  if (f.text_len > API_TEXT_MAX || f.binary_len > API_BINARY_MAX) {
    atomic_fetch_add(&ctx->oversize, 1);
    return NULL;
  }
  delivery_t *d = malloc(sizeof *d + f.text_len + f.binary_len);
  if (!d) {
    atomic_fetch_add(&ctx->dropped, 1);
    return NULL;
  }
  d->api = f;
  d->size = f.text_len + f.binary_len;
  if (f.text_len) memcpy(d->bytes, text, f.text_len);
  if (f.binary_len) memcpy(d->bytes + f.text_len, bin->_buffer, f.binary_len);
  return d;
}

static void on_data_available(dds_entity_t rd, void *arg) {
  reader_ctx_t *ctx = arg;
  union {
    LowCmd cmd;
    LowState state;
    ApiRequest request;
    ApiResponse response;
  } sample;
  void *samples[1] = {&sample};
  dds_sample_info_t si;
  for (;;) {
    /* Zeroed first: Cyclone fills the fields only, and the bytes handed on carry
     * zero padding, as the CRC convention wants (and an api sample's string and
     * sequence start empty, so Cyclone allocates them; freed below). */
    memset(&sample, 0, sizeof sample);
    dds_return_t n = dds_take(rd, samples, &si, 1, 1);
    if (n <= 0) break;
    delivery_t *d = NULL;
    if (KIND_IS_API(ctx->kind)) {
      if (si.valid_data) d = api_delivery(ctx, &sample);
      dds_sample_free(&sample, ctx->desc, DDS_FREE_CONTENTS);
      if (!d) continue;
    } else {
      if (!si.valid_data) continue;
      d = malloc(sizeof *d + ctx->size);
      if (!d) {
        atomic_fetch_add(&ctx->dropped, 1);
        continue;
      }
      d->size = ctx->size;
      memcpy(d->bytes, &sample, ctx->size);
    }
    d->kind = ctx->kind;
    d->receipt_ns = monotonic_ns();
    d->source_ns = si.source_timestamp;
    if (napi_call_threadsafe_function(ctx->tsfn, d, napi_tsfn_nonblocking) != napi_ok) {
      free(d);
      atomic_fetch_add(&ctx->dropped, 1);
    } else {
      atomic_fetch_add(&ctx->received, 1);
    }
  }
}

static int set_prop(napi_env env, napi_value obj, const char *name, napi_value v) {
  return napi_set_named_property(env, obj, name, v) == napi_ok;
}

/* The JS object of a delivered Request_/Response_ (the writeApi field names). */
static int api_object(napi_env env, const delivery_t *d, napi_value *out) {
  const api_fields_t *f = &d->api;
  napi_value v;
  void *copy;
  if (napi_create_object(env, out) != napi_ok) return 0;
  if (napi_create_bigint_int64(env, f->identity_id, &v) != napi_ok || !set_prop(env, *out, "identityId", v)) return 0;
  if (napi_create_bigint_int64(env, f->api_id, &v) != napi_ok || !set_prop(env, *out, "apiId", v)) return 0;
  if (d->kind == KIND_API_REQUEST) {
    if (napi_create_bigint_int64(env, f->lease_id, &v) != napi_ok || !set_prop(env, *out, "leaseId", v)) return 0;
    if (napi_create_int32(env, f->priority, &v) != napi_ok || !set_prop(env, *out, "priority", v)) return 0;
    if (napi_get_boolean(env, f->noreply != 0, &v) != napi_ok || !set_prop(env, *out, "noreply", v)) return 0;
  } else if (napi_create_int32(env, f->code, &v) != napi_ok || !set_prop(env, *out, "code", v))
    return 0;
  if (napi_create_string_utf8(env, (const char *)d->bytes, f->text_len, &v) != napi_ok ||
      !set_prop(env, *out, d->kind == KIND_API_REQUEST ? "parameter" : "data", v))
    return 0;
  if (napi_create_buffer_copy(env, f->binary_len, d->bytes + f->text_len, &copy, &v) != napi_ok ||
      !set_prop(env, *out, "binary", v))
    return 0;
  return 1;
}

static void call_js(napi_env env, napi_value js_cb, void *context, void *data) {
  (void)context;
  delivery_t *d = data;
  if (env == NULL || js_cb == NULL) {
    free(d);
    return;
  }
  napi_value argv[3], undef;
  void *copy_ptr;
  if (KIND_IS_API(d->kind)) {
    if (!api_object(env, d, &argv[0])) {
      free(d);
      return;
    }
  } else if (napi_create_buffer_copy(env, d->size, d->bytes, &copy_ptr, &argv[0]) != napi_ok) {
    free(d);
    return;
  }
  if (napi_create_bigint_uint64(env, d->receipt_ns, &argv[1]) != napi_ok ||
      napi_create_bigint_int64(env, d->source_ns, &argv[2]) != napi_ok || napi_get_undefined(env, &undef) != napi_ok) {
    free(d);
    return;
  }
  free(d);
  napi_call_function(env, undef, js_cb, 3, argv, NULL);
}

static void finalize_reader_ctx(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  reader_ctx_t *ctx = data;
  free(ctx);
}

static void finalize_reader_external(napi_env env, void *data, void *hint) {
  (void)env;
  (void)data;
  (void)hint;
  /* The context is owned by the thread-safe function; closeReader releases it. */
}

/* createReader(participant, kind, topic, typeName|null, withTypeInfo, onSample(sample, receiptNs, sourceNs))
 * sample: the bytes (LowCmd_/LowState_) or the object of writeApi (Request_/Response_).
 * Readers: best effort, keep-last 8 (they match a reliable or best-effort writer). */
static napi_value create_reader(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  endpoint_args_t a;
  napi_valuetype cbt;
  if (!parse_endpoint_args(env, argv, argc, &a) || argc < 6 || napi_typeof(env, argv[5], &cbt) != napi_ok ||
      cbt != napi_function)
    return throw_arg(env, "dds: createReader(participant, kind 0..3, topic, typeName|null, withTypeInfo, onSample)");
  reader_ctx_t *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return throw_arg(env, "dds: out of memory");
  ctx->kind = a.kind;
  ctx->size = sample_size(a.kind);
  atomic_init(&ctx->received, 0);
  atomic_init(&ctx->dropped, 0);
  atomic_init(&ctx->oversize, 0);
  napi_value name;
  CHECK_NAPI(napi_create_string_utf8(env, "ddsReader", NAPI_AUTO_LENGTH, &name));
  if (napi_create_threadsafe_function(env, argv[5], NULL, name, READER_QUEUE_MAX, 1, ctx, finalize_reader_ctx, NULL,
                                      call_js, &ctx->tsfn) != napi_ok) {
    free(ctx);
    return throw_arg(env, "dds: could not create the delivery queue");
  }
  ctx->desc = make_desc(a.kind, a.type_name, a.with_type_info);
  if (!ctx->desc) {
    napi_release_threadsafe_function(ctx->tsfn, napi_tsfn_abort);
    return throw_arg(env, "dds: out of memory");
  }
  dds_entity_t topic = dds_create_topic(a.participant, ctx->desc, a.topic, NULL, NULL);
  if (topic < 0) {
    napi_release_threadsafe_function(ctx->tsfn, napi_tsfn_abort);
    return throw_dds(env, "create_topic", topic);
  }
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_BEST_EFFORT, 0);
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 8);
  dds_listener_t *listener = dds_create_listener(ctx);
  dds_lset_data_available(listener, on_data_available);
  ctx->reader = dds_create_reader(a.participant, topic, qos, listener);
  dds_delete_qos(qos);
  dds_delete_listener(listener);
  if (ctx->reader < 0) {
    dds_return_t rc = ctx->reader;
    napi_release_threadsafe_function(ctx->tsfn, napi_tsfn_abort);
    return throw_dds(env, "create_reader", rc);
  }
  napi_value out;
  CHECK_NAPI(napi_create_external(env, ctx, finalize_reader_external, NULL, &out));
  return out;
}

static reader_ctx_t *get_reader(napi_env env, napi_value v) {
  napi_valuetype t;
  void *p = NULL;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external) return NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok) return NULL;
  return p;
}

/* closeReader(reader): deletes the DDS reader (Cyclone waits for a running
 * listener), then releases the delivery queue; queued samples are still delivered. */
static napi_value close_reader(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  reader_ctx_t *ctx = argc >= 1 ? get_reader(env, argv[0]) : NULL;
  if (!ctx) return throw_arg(env, "dds: closeReader(reader)");
  if (ctx->closed) return NULL;
  ctx->closed = 1;
  dds_delete(ctx->reader);
  napi_release_threadsafe_function(ctx->tsfn, napi_tsfn_release);
  return NULL;
}

/* readerStats(reader) -> { received, dropped, oversize, matched } */
static napi_value reader_stats(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  reader_ctx_t *ctx = argc >= 1 ? get_reader(env, argv[0]) : NULL;
  if (!ctx) return throw_arg(env, "dds: readerStats(reader)");
  int32_t matched = 0;
  if (!ctx->closed) {
    dds_subscription_matched_status_t st;
    if (dds_get_subscription_matched_status(ctx->reader, &st) == 0) matched = (int32_t)st.current_count;
  }
  napi_value out, r, d, o, m;
  CHECK_NAPI(napi_create_object(env, &out));
  CHECK_NAPI(napi_create_double(env, (double)atomic_load(&ctx->received), &r));
  CHECK_NAPI(napi_create_double(env, (double)atomic_load(&ctx->dropped), &d));
  CHECK_NAPI(napi_create_double(env, (double)atomic_load(&ctx->oversize), &o));
  CHECK_NAPI(napi_create_int32(env, matched, &m));
  CHECK_NAPI(napi_set_named_property(env, out, "received", r));
  CHECK_NAPI(napi_set_named_property(env, out, "dropped", d));
  CHECK_NAPI(napi_set_named_property(env, out, "oversize", o));
  CHECK_NAPI(napi_set_named_property(env, out, "matched", m));
  return out;
}

/* writerMatched(writer) -> current count of matched readers */
static napi_value writer_matched(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t writer;
  if (argc < 1 || !get_i32(env, argv[0], &writer)) return throw_arg(env, "dds: writerMatched(writer)");
  dds_publication_matched_status_t st;
  dds_return_t rc = dds_get_publication_matched_status(writer, &st);
  if (rc < 0) return throw_dds(env, "get_publication_matched_status", rc);
  napi_value out;
  CHECK_NAPI(napi_create_int32(env, (int32_t)st.current_count, &out));
  return out;
}

/* typeInfo(kind) -> { typeName, size (of the C struct), typeInformation: Buffer } (the XTypes
 * type information idlc generated, whose type identifiers peers compare). */
static napi_value type_info(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t kind;
  if (argc < 1 || !get_i32(env, argv[0], &kind) || !KIND_VALID(kind)) return throw_arg(env, "dds: typeInfo(kind 0..3)");
  const dds_topic_descriptor_t *d = base_desc(kind);
  napi_value out, n, s, b;
  void *copy;
  CHECK_NAPI(napi_create_object(env, &out));
  CHECK_NAPI(napi_create_string_utf8(env, d->m_typename, NAPI_AUTO_LENGTH, &n));
  CHECK_NAPI(napi_create_uint32(env, (uint32_t)sample_size(kind), &s));
  CHECK_NAPI(napi_create_buffer_copy(env, d->type_information.sz, d->type_information.data, &copy, &b));
  CHECK_NAPI(napi_set_named_property(env, out, "typeName", n));
  CHECK_NAPI(napi_set_named_property(env, out, "size", s));
  CHECK_NAPI(napi_set_named_property(env, out, "typeInformation", b));
  return out;
}

/* Node unloads an addon when the worker thread that loaded it exits. Cyclone keeps per-thread
 * state whose destructor lives in libddsc, and its threads call into this addon's listeners and
 * descriptors, so both stay mapped for the life of the process. */
static void pin_loaded(const void *symbol) {
  Dl_info info;
  if (dladdr(symbol, &info) && info.dli_fname) dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static napi_value init(napi_env env, napi_value exports) {
  pin_loaded((const void *)&dds_create_participant);
  pin_loaded((const void *)&on_data_available);
  napi_property_descriptor props[] = {
      {"createParticipant", NULL, create_participant, NULL, NULL, NULL, napi_default, NULL},
      {"deleteEntity", NULL, delete_entity, NULL, NULL, NULL, napi_default, NULL},
      {"createWriter", NULL, create_writer, NULL, NULL, NULL, napi_default, NULL},
      {"write", NULL, write_sample, NULL, NULL, NULL, napi_default, NULL},
      {"writeApi", NULL, write_api, NULL, NULL, NULL, napi_default, NULL},
      {"createReader", NULL, create_reader, NULL, NULL, NULL, napi_default, NULL},
      {"closeReader", NULL, close_reader, NULL, NULL, NULL, napi_default, NULL},
      {"readerStats", NULL, reader_stats, NULL, NULL, NULL, napi_default, NULL},
      {"writerMatched", NULL, writer_matched, NULL, NULL, NULL, napi_default, NULL},
      {"typeInfo", NULL, type_info, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
