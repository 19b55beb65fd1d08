#pragma once
// Session.analyze / listItems / mergeResults without Emscripten: one JSON request in, one result
// document (docs/result-schema.md) out, with a JSON event per finished item. The wasm binding and
// native tools call these; sorting of merged sweeps lives only here (§3.4).
#include <functional>
#include <string>

#include "config/config_doc.h"
#include "data/calibration_data.h"
#include "exec/executor.h"
#include "quant/relations.h"

namespace ptq::api {

struct Context {
  exec::Executor& executor;
  const quant::CalibrationRelations& relations;  // built from executor.graph()
  const data::CalibrationData* data = nullptr;    // nullptr: none loaded (analyze fails, listItems works)
};

// One event JSON per finished item: {"type":"item","analysis","section","item","index","row","done","total"}.
using EventFn = std::function<void(const std::string& event_json)>;
// Asked between steps of the analyses that honour it (fix: before every evaluation); true stops the
// analysis, whose result then has "cancelled": true and no answer to use (fix: no configuration).
using CancelFn = std::function<bool()>;

std::string analyze(const Context& context, const std::string& request_json, const EventFn& on_event = {},
                    const CancelFn& cancel = {});

// JSON array of the sweep's item names in run order ([] for analyses that are not split).
std::string list_items(const Context& context, const std::string& request_json);

// A configuration document (docs/config-schema.md) checked against the model and written back resolved:
// its intents and every calibration node's state. Errors name the field ("config.intents[0].node: ...").
std::string resolve_config(const Context& context, const std::string& config_json);

// The executor configuration a configuration document sets (what `run` executes under it).
exec::QuantConfig quant_config_of(const Context& context, const std::string& config_json);

// A configuration document applied to the model; thresholds chosen by a method observe the tuning
// half of every sample (§13.4) when calibration data is loaded.
quant::ResolvedConfig apply_config_document(const Context& context, const std::string& config_json);

// Merges partial result documents of one request (a JSON array of documents) into one.
std::string merge_results(const std::string& results_json_array);

}  // namespace ptq::api
