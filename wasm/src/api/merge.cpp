// mergeResults: partial documents of one split sweep (request `items`) -> the document one run over
// the union would give. Numbers are carried as their source text, so merged rows are byte-identical
// to the parts'; only the order is recomputed, with the §3.4 rule of analysis::sort_rows.
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/metrics.h"
#include "analysis/sensitivity.h"
#include "api/analyze.h"
#include "io/json.h"
#include "core/error.h"

namespace ptq::api {

using io::Json;
namespace {

const Json& member(const Json& doc, const std::string& key, const std::string& where) {
  const Json* v = doc.find(key);
  check(v != nullptr, "mergeResults: " + where + " has no \"" + key + "\"");
  return *v;
}

// One computed item of a part: its position in the full sweep and its entries (key, value) in the
// section object (several for a node with several plotted outputs).
struct Entry {
  size_t index;
  std::string key;
  Json value;
};

// Position of `name` among a part's sweep items.
size_t index_of(const Json& sweep, const std::string& name, const std::string& where) {
  const auto& items = member(sweep, "items", where + ".sweep").items();
  const auto& indices = member(sweep, "indices", where + ".sweep").items();
  for (size_t k = 0; k < items.size() && k < indices.size(); ++k)
    if (items[k].as_string() == name) return static_cast<size_t>(indices[k].as_number());
  fail("mergeResults: " + where + " holds '" + name + "', which is not among its sweep.items");
}

// The sweep item a section entry belongs to: sensitivity rows and channelwise plots are keyed by it,
// distribution plots name it in "name".
std::string item_of(const std::string& section, const std::string& key, const Json& value) {
  if (section == "distribution") {
    const Json* name = value.find("name");
    check(name && name->is_string(), "mergeResults: distribution plot '" + key + "' has no name");
    return name->as_string();
  }
  return key;
}

// §3.4: the first metric in its direction, NaN last, ties in run order (sort_rows on the full run).
void sort_sensitivity(std::vector<Entry>& entries, const std::string& metric) {
  const analysis::Metric first = analysis::parse_metric(metric);
  auto value = [&](const Entry& e) {
    const Json* v = e.value.find(metric);
    return v && v->is_numeric() ? v->as_number() : std::nan("");  // missing sorts as NaN (§3.4)
  };
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    return analysis::ranks_before(first, value(a), value(b));
  });
}

// acc_error parts hold only their curves' figures: a figure's curves are the union over the parts in
// sweep order, figures ordered by their first curve (the plan's figures are contiguous in the sweep).
Json merged_acc_error_figures(const Json& parts, const std::vector<Entry>& entries) {
  auto index_of_key = [&](const std::string& key) {
    for (const auto& e : entries)
      if (e.key == key) return e.index;
    fail("mergeResults: acc_error_figures names the curve '" + key + "', which no part holds");
  };
  struct Figure {
    Json value;
    std::map<size_t, std::string> curves;  // sweep index -> key
  };
  std::vector<Figure> figures;
  for (const Json& part : parts.items())
    for (const Json& figure : member(part, "acc_error_figures", "a part").items()) {
      const Json& prefix = member(figure, "prefix", "acc_error_figures[]");
      auto it = std::find_if(figures.begin(), figures.end(), [&](const Figure& f) { return *f.value.find("prefix") == prefix; });
      if (it == figures.end()) it = figures.insert(figures.end(), Figure{figure, {}});
      for (const Json& key : member(figure, "curves", "acc_error_figures[]").items())
        it->curves.emplace(index_of_key(key.as_string()), key.as_string());
    }
  std::stable_sort(figures.begin(), figures.end(),
                   [](const Figure& a, const Figure& b) { return a.curves.begin()->first < b.curves.begin()->first; });
  Json out = Json::array();
  for (Figure& f : figures) {
    Json keys = Json::array();
    for (const auto& curve : f.curves) keys.push(Json::string(curve.second));
    f.value.set("curves", std::move(keys));
    out.push(std::move(f.value));
  }
  return out;
}

// The union of the parts' messages in first-occurrence order (a part adds a note, e.g. a tensor that
// changes size, only when one of its curves meets it; notes follow the planning messages all parts share).
Json merged_messages(const Json& parts, const std::string& key) {
  Json out = Json::array();
  for (const Json& part : parts.items())
    if (const Json* messages = part.find(key); messages && messages->is_array())
      for (const Json& m : messages->items())
        if (std::find(out.items().begin(), out.items().end(), m) == out.items().end()) out.push(m);
  return out;
}

// The union of the parts' lists of item names under `key`, in full-sweep order.
Json merged_not_run(const Json& parts, const std::string& key) {
  std::map<size_t, std::string> names;
  for (size_t p = 0; p < parts.items().size(); ++p) {
    const Json& part = parts.items()[p];
    const std::string where = "results[" + std::to_string(p) + "]";
    if (const Json* list = part.find(key); list && list->is_array())
      for (const Json& name : list->items()) {
        check(name.is_string(), "mergeResults: " + where + "." + key + " holds a value that is not a node name");
        names.emplace(index_of(member(part, "sweep", where), name.as_string(), where), name.as_string());
      }
  }
  Json out = Json::array();
  for (const auto& entry : names) out.push(Json::string(entry.second));
  return out;
}

}  // namespace

std::string merge_results(const std::string& results_json_array) {
  const Json parts = Json::parse(results_json_array, "mergeResults");
  check(parts.is_array() && !parts.items().empty(), "mergeResults: expected a non-empty array of result documents");
  for (size_t p = 0; p < parts.items().size(); ++p) {
    const Json& part = parts.items()[p];
    const std::string where = "results[" + std::to_string(p) + "]";
    check(part.is_object(), "mergeResults: " + where + " is not a result document");
    const Json* schema = part.find("schema");
    check(schema && schema->is_string() && schema->as_string() == "ptqscope.result",
          "mergeResults: " + where + " is not a ptqscope.result document");
  }
  if (parts.items().size() == 1) return parts.items()[0].dump();

  const Json& first = parts.items()[0];
  const Json* first_sweep = first.find("sweep");
  check(first_sweep != nullptr, "mergeResults: results[0] has no \"sweep\": its analysis is not split into items");
  const std::string section = member(*first_sweep, "section", "results[0].sweep").as_string();
  const std::string key = member(*first_sweep, "key", "results[0].sweep").as_string();
  const bool sensitivity = section == "sensitivity" || section == "leave_one_out";

  // Every part must come from the same request on the same model and data.
  const std::vector<std::string> same = {"version", "model", "calibration_samples", "relations", "config", "options",
                                         "samples", "compared_tensors", section + "_sample"};
  std::map<size_t, std::string> names;  // full-sweep index -> item name
  std::vector<Entry> entries;
  bool cancelled = false;
  std::vector<std::pair<std::string, double>> timings;
  for (size_t p = 0; p < parts.items().size(); ++p) {
    const Json& part = parts.items()[p];
    const std::string where = "results[" + std::to_string(p) + "]";
    const Json& sweep = member(part, "sweep", where);
    for (const char* field : {"analysis", "section", "key", "total"})
      check(member(sweep, field, where + ".sweep") == member(*first_sweep, field, "results[0].sweep"),
            "mergeResults: " + where + ".sweep." + field + " differs from results[0] (not parts of one request)");
    for (const auto& field : same) {
      const Json* a = part.find(field);
      const Json* b = first.find(field);
      check((a == nullptr) == (b == nullptr) && (a == nullptr || *a == *b),
            "mergeResults: " + where + "." + field + " differs from results[0] (not parts of one request)");
    }
    const auto& items = member(sweep, "items", where + ".sweep").items();
    const auto& indices = member(sweep, "indices", where + ".sweep").items();
    check(items.size() == indices.size(), "mergeResults: " + where + ".sweep.items and .indices differ in length");
    // Overlapping parts are allowed: an item computed twice is taken from the first part.
    for (size_t k = 0; k < items.size(); ++k) names.emplace(static_cast<size_t>(indices[k].as_number()), items[k].as_string());
    const Json& table = sensitivity ? member(member(part, section, where), key, where + "." + section)
                                    : member(part, section, where);
    // (No structured bindings here: clang 14 cannot capture them in the lambdas.)
    for (const auto& member : table.members()) {
      const std::string& entry_key = member.first;
      const size_t index = index_of(sweep, item_of(section, entry_key, member.second), where);
      const bool already = std::any_of(entries.begin(), entries.end(), [&](const Entry& e) {
        return e.index == index && e.key == entry_key;
      });
      if (!already) entries.push_back({index, entry_key, member.second});
    }
    if (const Json* c = part.find("cancelled"); c && c->is_bool()) cancelled = cancelled || c->as_bool();
    if (const Json* t = part.find("timings_ms"); t && t->is_object())
      for (const auto& timing : t->members()) {
        auto it = std::find_if(timings.begin(), timings.end(), [&](const auto& e) { return e.first == timing.first; });
        if (it == timings.end()) timings.emplace_back(timing.first, timing.second.as_number());
        else it->second += timing.second.as_number();
      }
  }

  // Run order first (stable within one item), then the sensitivity ranking.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.index < b.index; });
  if (sensitivity) {
    const Json& metrics = member(member(member(first, "options", "results[0]"), section, "results[0].options"), "metrics",
                                 "results[0].options." + section);
    check(metrics.is_array() && !metrics.items().empty(), "mergeResults: results[0].options." + section + ".metrics is empty");
    sort_sensitivity(entries, metrics.items()[0].as_string());
  }

  Json merged = first;
  Json table = Json::object();
  Json order = Json::array();
  for (const auto& e : entries) {
    table.set(e.key, e.value);
    order.push(Json::string(e.key));
  }
  if (sensitivity) {
    merged.find(section)->set(key, std::move(table));
    merged.find(section + "_order")->set(key, std::move(order));
  } else if (section == "acc_error") {  // curves in sweep order; figures instead of an _order list
    merged.set(section, std::move(table));
    merged.set("acc_error_figures", merged_acc_error_figures(parts, entries));
    merged.set("acc_error_messages", merged_messages(parts, "acc_error_messages"));
  } else {
    merged.set(section, std::move(table));
    merged.set(section + "_order", std::move(order));
    // Nodes a part could not plot (distribution, channelwise: not run on the sample), in item order,
    // where a whole run writes them: right after the sample.
    Json not_run = merged_not_run(parts, section + "_not_run");
    merged.erase(section + "_not_run");
    if (!not_run.items().empty()) {
      Json ordered = Json::object();
      for (const auto& m : merged.members()) {
        ordered.set(m.first, m.second);
        if (m.first == section + "_sample") ordered.set(section + "_not_run", not_run);
      }
      merged = std::move(ordered);
    }
  }
  Json sweep = *first_sweep;
  Json items = Json::array(), indices = Json::array();
  for (const auto& [index, name] : names) {
    items.push(Json::string(name));
    indices.push(Json::number_text(std::to_string(index)));
  }
  sweep.set("items", std::move(items));
  sweep.set("indices", std::move(indices));
  merged.set("sweep", std::move(sweep));
  merged.set("cancelled", Json::boolean(cancelled));
  // Parts computed by different engines (native and wasm, or other instruction sets): each one's.
  std::vector<std::string> engines;
  for (const Json& part : parts.items())
    if (const Json* e = part.find("engine"); e && std::find(engines.begin(), engines.end(), e->dump()) == engines.end())
      engines.push_back(e->dump());
  if (engines.size() > 1) {
    Json mixed = Json::array();
    for (const std::string& e : engines) mixed.push(Json::parse(e, "engine"));
    Json engine = Json::object();
    engine.set("name", Json::string("mixed"));
    engine.set("parts", std::move(mixed));
    merged.set("engine", std::move(engine));
  }
  io::JsonWriter tw;
  tw.begin_object();
  for (const auto& [name, ms] : timings) tw.field(name, ms);
  tw.end_object();
  merged.set("timings_ms", Json::parse(tw.str(), "timings"));
  return merged.dump();
}

}  // namespace ptq::api
