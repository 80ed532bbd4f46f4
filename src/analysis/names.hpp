// Name helpers shared by rules: op names as traces spell them, device task names,
// and the human-readable units rules put in their messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace npud {

// "aten::add.Tensor" -> "add"; "aten::add_" -> "add_"; "add.out" -> "add".
std::string_view aten_base(std::string_view op);
// "aten::add.Tensor" -> "add.Tensor" (namespace removed, overload kept).
std::string_view strip_aten(std::string_view op);
bool is_aten_name(std::string_view op);

// Ascend device task names carry an instance suffix: "ZerosLike46", "trans_Cast_5",
// "ApplyAdamW179", "hcom_allReduce__445". Strips it ("ZerosLike", "trans_Cast", "ApplyAdamW",
// "hcom_allReduce") while keeping a single digit after a letter ("MatMulV2").
std::string normalize_task_name(std::string_view name);

// Kernel names of templated code run to kilobytes: text outputs cut them to `max` bytes (at a
// UTF-8 boundary) plus "..."; JSON keeps them whole.
std::string cut_name(std::string_view s, size_t max = 100);

// "1.23 ms", "456 us", "12.3 s", "850 ns".
std::string format_duration(int64_t ns);
// 0.1234 -> "12.3%"; small shares keep two significant digits ("0.012%").
std::string format_share(double share);
// 3 -> "3", 0.25 -> "0.25", 12.345 -> "12.3".
std::string format_number(double v);
// 512 -> "512 B", 3072 -> "3.0 KiB", 5.5 MiB -> "5.5 MiB".
std::string format_bytes(double bytes);

// The value of `key` in `key=value` words separated by spaces, or "" when absent: a capture
// event's attribute text ("foreach=None fused=False", the `reason` of optimizer_config and
// python_api events) and an op call's arguments ("reduce=sum include_self=False").
std::string_view attribute_value(std::string_view text, std::string_view key);

}  // namespace npud
