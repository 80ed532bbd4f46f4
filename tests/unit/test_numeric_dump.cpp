// Dump directories (docs/formats/dump.md): our index.jsonl, msprobe dump.json (statistics and
// tensor tasks), npy trees; matching, first divergence, and every way an index can be unsafe.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "util/input_error.hpp"
#include "numeric/compare.hpp"
#include "numeric/dump.hpp"

namespace fs = std::filesystem;
using namespace npud;

namespace {

class TempDir {
 public:
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("npud-dump-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

void write_npy(const fs::path& p, const std::vector<float>& v, const std::string& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  write(p, out);
}

const char* kHeader = R"({"format":"npu-doctor-dump","version":1,"torch":"1.13.1","device":"cpu","argv":[]})";

std::string entry(int seq, const std::string& key, const std::string& file, const std::string& shape = "[4]") {
  return "{\"seq\":" + std::to_string(seq) + ",\"key\":\"" + key + "\",\"kind\":\"module\",\"name\":\"" + key +
         "\",\"io\":\"output\",\"arg\":0,\"call\":0,\"step\":1,\"dtype\":\"float32\",\"shape\":" + shape +
         ",\"file\":\"" + file + "\",\"stack\":[[\"train.py\"," + std::to_string(40 + seq) + ",\"forward\"]]}";
}

// An npu-doctor dump under dir/dump with tensors a, b, c; `b_scale` scales b's values.
void make_ours(const fs::path& dir, float b_scale) {
  std::vector<float> v = {1, 2, 3, 4};
  std::vector<float> b = {b_scale, 2 * b_scale, 3, 4};
  write_npy(dir / "dump/tensors/000001.npy", v, "(4,)");
  write_npy(dir / "dump/tensors/000002.npy", b, "(4,)");
  write_npy(dir / "dump/tensors/000003.npy", v, "(2, 2)");
  write(dir / "dump/index.jsonl", std::string(kHeader) + "\n" + entry(1, "m.a.forward.0.output.0", "tensors/000001.npy") +
                                      "\n" + entry(2, "m.b.forward.0.output.0", "tensors/000002.npy") + "\n" +
                                      entry(3, "m.c.forward.0.output.0", "tensors/000003.npy", "[2,2]") + "\n");
}

std::string error_of_read(const fs::path& p) {
  try {
    read_dump(p.string());
  } catch (const InputError& e) {
    return e.describe();
  }
  return "";
}

}  // namespace

TEST(NumericDump, OursFirstDivergenceWithStack) {
  TempDir ref, tgt;
  make_ours(ref.path, 1);
  make_ours(tgt.path, 1.5);
  Dump r = read_dump(ref.path.string()), t = read_dump((tgt.path / "dump").string());
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_EQ(r.layout, DumpLayout::Ours);
  EXPECT_EQ(r.entries[0].stack.at(0).file, "train.py");
  EXPECT_EQ(r.entries[0].stack.at(0).line, 41);
  CompareResult res = compare_dumps(r, t);
  EXPECT_FALSE(res.by_order);
  ASSERT_EQ(res.pairs.size(), 3u);
  ASSERT_TRUE(res.first_divergence.has_value());
  EXPECT_EQ(r.entries[res.pairs[*res.first_divergence].ref].key, "m.b.forward.0.output.0");
  EXPECT_EQ(res.diverging, 1u);
  uint64_t bytes = 0;
  for (const auto* d : {&ref, &tgt})
    for (const char* f : {"000001.npy", "000002.npy", "000003.npy"}) bytes += fs::file_size(d->path / "dump/tensors" / f);
  EXPECT_EQ(res.tensor_bytes, bytes);
}

TEST(NumericDump, ShapeMismatchBetweenSidesIsReportedNotCompared) {
  TempDir ref, tgt;
  make_ours(ref.path, 1);
  make_ours(tgt.path, 1);
  write_npy(tgt.path / "dump/tensors/000003.npy", {1, 2, 3, 4}, "(4,)");
  write(tgt.path / "dump/index.jsonl",
        std::string(kHeader) + "\n" + entry(1, "m.a.forward.0.output.0", "tensors/000001.npy") + "\n" +
            entry(2, "m.b.forward.0.output.0", "tensors/000002.npy") + "\n" +
            entry(3, "m.c.forward.0.output.0", "tensors/000003.npy", "[4]") + "\n");
  CompareResult res = compare_dumps(read_dump(ref.path.string()), read_dump(tgt.path.string()));
  ASSERT_EQ(res.pairs.size(), 3u);
  EXPECT_EQ(res.pairs[2].status, PairResult::Status::ShapeMismatch);
  EXPECT_TRUE(res.pairs[2].diverges);
  EXPECT_NE(res.pairs[2].reason.find("[2,2]"), std::string::npos);
}

TEST(NumericDump, IndexShapeThatLiesAboutTheFile) {
  TempDir ref, tgt;
  make_ours(ref.path, 1);
  make_ours(tgt.path, 1);
  write_npy(tgt.path / "dump/tensors/000003.npy", {1, 2, 3, 4}, "(4,)");  // index still says [2,2]
  Dump r = read_dump(ref.path.string()), t = read_dump(tgt.path.string());
  try {
    compare_dumps(r, t);
    FAIL() << "compared";
  } catch (const InputError& e) {
    EXPECT_NE(e.describe().find("000003.npy"), std::string::npos) << e.describe();
    EXPECT_NE(e.describe().find("not the index's"), std::string::npos) << e.describe();
  }
}

TEST(NumericDump, RefusesPathsLeavingTheDumpDirectory) {
  TempDir d, outside;
  write_npy(outside.path / "secret.npy", {1, 2, 3, 4}, "(4,)");
  write_npy(d.path / "dump/tensors/000001.npy", {1, 2, 3, 4}, "(4,)");
  fs::create_symlink(outside.path / "secret.npy", d.path / "dump/tensors/link.npy");
  const std::pair<std::string, std::string> cases[] = {
      {"../../secret.npy", "leaves the dump directory"},
      {"tensors/../../x.npy", "leaves the dump directory"},
      {(outside.path / "secret.npy").string(), "absolute path"},
      {"tensors/link.npy", "outside the dump directory"},
      {"tensors/missing.npy", "missing"},
  };
  for (const auto& [file, message] : cases) {
    SCOPED_TRACE(file);
    write(d.path / "dump/index.jsonl", std::string(kHeader) + "\n" + entry(1, "k", file) + "\n");
    std::string e = error_of_read(d.path);
    EXPECT_NE(e.find(message), std::string::npos) << e;
    EXPECT_NE(e.find("index.jsonl: byte " + std::to_string(std::string(kHeader).size() + 1)), std::string::npos) << e;
  }
}

TEST(NumericDump, IndexLinesBadAndCutOff) {
  TempDir d;
  write_npy(d.path / "dump/tensors/000001.npy", {1, 2, 3, 4}, "(4,)");
  std::string good = std::string(kHeader) + "\n" + entry(1, "k", "tensors/000001.npy") + "\n";
  write(d.path / "dump/index.jsonl", good + "{\"seq\":2,\"key\":\"k2\",\"fi");  // killed mid-line
  Dump dump = read_dump(d.path.string());
  EXPECT_EQ(dump.entries.size(), 1u);
  ASSERT_EQ(dump.notes.size(), 1u);
  write(d.path / "dump/index.jsonl", good + "not json\n" + entry(3, "k3", "tensors/000001.npy") + "\n");
  EXPECT_NE(error_of_read(d.path).find("byte " + std::to_string(good.size()) + ": invalid JSON"), std::string::npos);
  write(d.path / "dump/index.jsonl", entry(1, "k", "tensors/000001.npy") + "\n");
  EXPECT_NE(error_of_read(d.path).find("not an npu-doctor dump header"), std::string::npos);
  write(d.path / "dump/index.jsonl", std::string(kHeader) + "\n{\"key\":\"k\",\"file\":\"tensors/000001.npy\"}\n");
  EXPECT_NE(error_of_read(d.path).find("shape"), std::string::npos);
}

// Issue 30: a run whose Python lacked numpy left no dump, and compare said "no dump here". The
// shim now writes a header saying why (npu_doctor/_dump.py), and a line when the dump stopped.
TEST(NumericDump, NotStartedAndStoppedDumpsSayWhy) {
  TempDir d;
  write(d.path / "dump/index.jsonl",
        R"({"format":"npu-doctor-dump","version":1,"argv":[],"select":"*","not_started":)"
        R"("ModuleNotFoundError: import of numpy halted; None in sys.modules"})" "\n");
  std::string e = error_of_read(d.path);
  EXPECT_NE(e.find("index.jsonl: byte 0: the tensor dump did not start in the program (ModuleNotFoundError"),
            std::string::npos) << e;
  EXPECT_NE(e.find("install numpy in the Python that runs the program"), std::string::npos) << e;
  EXPECT_EQ(dump_problem((d.path / "dump").string()), e);
  EXPECT_NE(dump_problem((d.path / "nowhere").string()).find("no tensor dump was written in"), std::string::npos);

  write_npy(d.path / "dump/tensors/000001.npy", {1, 2, 3, 4}, "(4,)");
  std::string good = std::string(kHeader) + "\n" + entry(1, "k", "tensors/000001.npy") + "\n";
  write(d.path / "dump/index.jsonl", good + R"({"stopped":"RuntimeError: boom"})" "\n");
  Dump dump = read_dump(d.path.string());
  EXPECT_EQ(dump.entries.size(), 1u);
  ASSERT_EQ(dump.notes.size(), 1u);
  EXPECT_NE(dump.notes[0].find("the dump stopped early in the program (RuntimeError: boom)"), std::string::npos);
  EXPECT_NE(dump_problem((d.path / "dump").string()).find("stopped early"), std::string::npos);
  write(d.path / "dump/index.jsonl", std::string(kHeader) + "\n");
  EXPECT_NE(dump_problem((d.path / "dump").string()).find("nothing the selection names ran"), std::string::npos);
  write(d.path / "dump/index.jsonl", good);
  EXPECT_EQ(dump_problem((d.path / "dump").string()), "");
}

// #18.9: an index dtype that disagrees with the .npy header was trusted (metrics on the wrong
// precision). bfloat16 saved widened to float32 is how dumps hold it, and is accepted.
TEST(NumericDump, IndexDtypeThatLiesAboutTheFile) {
  TempDir ref, tgt;
  make_ours(ref.path, 1);
  make_ours(tgt.path, 1);
  auto with_dtype = [&](const std::string& dtype) {
    std::string e = entry(1, "m.a.forward.0.output.0", "tensors/000001.npy");
    e.replace(e.find("\"float32\""), 9, "\"" + dtype + "\"");
    write(tgt.path / "dump/index.jsonl", std::string(kHeader) + "\n" + e + "\n" +
                                             entry(2, "m.b.forward.0.output.0", "tensors/000002.npy") + "\n" +
                                             entry(3, "m.c.forward.0.output.0", "tensors/000003.npy", "[2,2]") + "\n");
    return read_dump(tgt.path.string());
  };
  Dump r = read_dump(ref.path.string());
  EXPECT_NO_THROW(compare_dumps(r, with_dtype("bfloat16")));
  try {
    compare_dumps(r, with_dtype("float16"));
    FAIL() << "compared";
  } catch (const InputError& e) {
    EXPECT_NE(e.describe().find("000001.npy"), std::string::npos) << e.describe();
    EXPECT_NE(e.describe().find("the file's dtype float32 is not the index's float16"), std::string::npos) << e.describe();
  }
}

// #18 (messages): msprobe dump.json errors name their byte offset: where the JSON breaks, or
// the key of the entry that is wrong.
TEST(NumericDump, MsprobeErrorsNameTheirOffset) {
  TempDir d;
  std::string good = R"({"task":"statistics","framework":"pytorch","data":{
 "Tensor.add.0.forward":{"input_args":[{"type":"torch.Tensor","dtype":"torch.float32","shape":[2],"Max":1}]},
 "Tensor.mul.1.forward":{"input_args":[{"type":"torch.Tensor","dtype":"torch.float32","Max":1}]}}})";
  write(d.path / "dump.json", good);
  std::string e = error_of_read(d.path);
  EXPECT_NE(e.find("byte " + std::to_string(good.find("\"Tensor.mul.1.forward\""))), std::string::npos) << e;
  EXPECT_NE(e.find("lacks a \"shape\" list"), std::string::npos) << e;
  std::string broken = good;
  size_t comma = good.find("\"Max\":1}]},") + 7;
  broken.insert(comma, ",");  // {"Max":1,}: the '}' after it is where a key is missing
  write(d.path / "dump.json", broken);
  e = error_of_read(d.path);
  EXPECT_NE(e.find("invalid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("byte " + std::to_string(comma + 1)), std::string::npos) << e;
}

TEST(NumericDump, MsprobeTensorTaskNpyAndPt) {
  TempDir ref, tgt;
  const char* json = R"({"task":"tensor","level":"L1","framework":"mindspore","data":{
    "Functional.relu.0.forward":{"input_args":[{"type":"mindspore.Tensor","dtype":"Float32","shape":[4],
      "Max":4,"Min":1,"Mean":2.5,"Norm":5.477,"data_name":"Functional.relu.0.forward.input.0.npy"}],
      "input_kwargs":{},
      "output":[{"type":"mindspore.Tensor","dtype":"Float32","shape":[4],
      "Max":4,"Min":1,"Mean":2.5,"Norm":5.477,"data_name":"Functional.relu.0.forward.output.0.npy"}]}}})";
  for (const auto* d : {&ref, &tgt}) {
    write(d->path / "step0/rank0/dump.json", json);
    write_npy(d->path / "step0/rank0/dump_tensor_data/Functional.relu.0.forward.input.0.npy", {1, 2, 3, 4}, "(4,)");
  }
  write_npy(ref.path / "step0/rank0/dump_tensor_data/Functional.relu.0.forward.output.0.npy", {1, 2, 3, 4}, "(4,)");
  write_npy(tgt.path / "step0/rank0/dump_tensor_data/Functional.relu.0.forward.output.0.npy", {1, 2, 3, 5}, "(4,)");
  Dump r = read_dump(ref.path.string()), t = read_dump(tgt.path.string());
  EXPECT_EQ(r.layout, DumpLayout::Msprobe);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[1].key, "Functional.relu.0.forward.output.0");
  CompareResult res = compare_dumps(r, t);
  ASSERT_TRUE(res.first_divergence.has_value());
  EXPECT_EQ(res.pairs[*res.first_divergence].status, PairResult::Status::Compared);
  EXPECT_EQ(*res.first_divergence, 1u);

  std::string pt = json;
  pt.replace(pt.find("input.0.npy"), 11, "input.0.pt");
  write(tgt.path / "step0/rank0/dump.json", pt);
  // A .pt tensor file is located like an .npy one (and read by numeric/pt when compared).
  std::string e = error_of_read(tgt.path);
  EXPECT_NE(e.find("input.0.pt is missing"), std::string::npos) << e;
  write(tgt.path / "step0/rank0/dump_tensor_data/Functional.relu.0.forward.input.0.pt", std::string("\x80\x02}q\x00.", 6));
  t = read_dump(tgt.path.string());
  EXPECT_EQ(t.entries[0].file.substr(t.entries[0].file.size() - 3), ".pt");
  try {
    compare_dumps(r, t);
    ADD_FAILURE() << "a legacy pickle was compared";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("legacy torch.save file"), std::string::npos) << err.what();
  }

  std::string escape = json;
  escape.replace(escape.find("Functional.relu.0.forward.input.0.npy"), 37, "../../../../etc/passwd");
  write(tgt.path / "step0/rank0/dump.json", escape);
  EXPECT_NE(error_of_read(tgt.path).find("leaves the dump directory"), std::string::npos);
}

TEST(NumericDump, MsprobeStatisticsAcrossFrameworks) {
  TempDir ref, tgt;
  write(ref.path / "dump.json", R"({"task":"statistics","framework":"pytorch","data":{
    "Torch.matmul.0.forward":{"input_args":[{"type":"torch.Tensor","dtype":"torch.float16","shape":[2,2],
      "Max":1.0,"Min":-1.0,"Mean":0.0,"Norm":2.0},{"type":"int","value":3}],"input_kwargs":{},
      "output":[{"type":"torch.Tensor","dtype":"torch.float16","shape":[2,2],"Max":2.0,"Min":-2.0,"Mean":0.1,"Norm":4.0}]}}})");
  write(tgt.path / "dump.json", R"({"task":"statistics","framework":"mindspore","data":{
    "Mint.matmul.0.forward":{"input_args":[{"type":"mindspore.Tensor","dtype":"Float16","shape":[2,2],
      "Max":1.0,"Min":-1.0,"Mean":0.0,"Norm":2.0}],"input_kwargs":{},
      "output":[{"type":"mindspore.Tensor","dtype":"Float16","shape":[2,2],"Max":2.5,"Min":-2.0,"Mean":0.1,"Norm":"inf"}]}}})");
  Dump r = read_dump(ref.path.string()), t = read_dump(tgt.path.string());
  EXPECT_TRUE(r.statistics_only());
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].dtype, "float16");
  EXPECT_EQ(t.entries[0].dtype, "float16");
  // msprobe's own MindSpore renames (Mint. -> Torch.) pair them by key.
  CompareResult res = compare_dumps(r, t);
  EXPECT_FALSE(res.by_order);
  EXPECT_EQ(res.renamed, 2u);
  ASSERT_EQ(res.pairs.size(), 2u);
  EXPECT_EQ(res.pairs[0].status, PairResult::Status::StatsCompared);
  EXPECT_FALSE(res.pairs[0].diverges);
  EXPECT_TRUE(res.pairs[1].diverges);
  EXPECT_NE(res.pairs[1].reason.find("Max"), std::string::npos) << res.pairs[1].reason;
  EXPECT_EQ(res.first_divergence, 1u);
}

// A byte order mark (Windows editors) is skipped, and error offsets still count it; a key
// twice in "data" is named with its offset; an entry that is not an object is named.
TEST(NumericDump, MsprobeBomDuplicateKeysAndEntriesThatAreNotObjects) {
  TempDir d;
  const std::string bom = "\xEF\xBB\xBF";
  std::string body = R"({"task":"statistics","framework":"pytorch","data":{
 "Module.encoder.layer.3.forward":{"output":[{"type":"torch.Tensor","dtype":"torch.bfloat16","shape":[8],"Max":2}]},
 "Tensor.softmax.7.forward":[0, 1],
 "Module.encoder.layer.3.forward":{"output":[{"type":"torch.Tensor","dtype":"torch.bfloat16","shape":[8],"Max":3}]}}})";
  write(d.path / "dump.json", bom + body);
  Dump dump = read_dump(d.path.string());
  EXPECT_EQ(dump.entries.size(), 2u);
  std::string notes;
  for (const auto& n : dump.notes) notes += n + "\n";
  size_t second = (bom + body).rfind("\"Module.encoder.layer.3.forward\"");
  EXPECT_NE(notes.find("entry \"Module.encoder.layer.3.forward\" appears more than once (byte " +
                       std::to_string(second) + ")"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("1 entry is not an object"), std::string::npos) << notes;
  EXPECT_NE(notes.find("\"Tensor.softmax.7.forward\" (byte " + std::to_string((bom + body).find("\"Tensor.softmax")) + ")"),
            std::string::npos)
      << notes;

  std::string broken = bom + R"({"task":"statistics","data":{"x":{"output":[}}})";
  write(d.path / "dump.json", broken);
  std::string e = error_of_read(d.path);
  EXPECT_NE(e.find("byte " + std::to_string(broken.find("[}") + 1)), std::string::npos) << e;
}

TEST(NumericDump, NpyTreeKeysAndBadFiles) {
  TempDir d;
  write_npy(d.path / "b/x.npy", {1, 2, 3, 4}, "(4,)");
  write_npy(d.path / "a.npy", {1, 2, 3, 4}, "(2, 2)");
  write(d.path / "notes.txt", "not a tensor");
  Dump dump = read_dump(d.path.string());
  ASSERT_EQ(dump.entries.size(), 2u);
  EXPECT_EQ(dump.entries[0].key, "a");
  EXPECT_EQ(dump.entries[1].key, "b/x");
  EXPECT_EQ(dump.entries[0].shape, (std::vector<int64_t>{2, 2}));
  write(d.path / "c.npy", "\x93NUMPY\x01");
  EXPECT_NE(error_of_read(d.path).find("c.npy: byte"), std::string::npos);
  TempDir empty;
  EXPECT_NE(error_of_read(empty.path).find("no dump here"), std::string::npos);
  EXPECT_NE(error_of_read(empty.path / "nope").find("no such file"), std::string::npos);
}

namespace {

// One msprobe statistics entry: `key` with one float16 output of [2,2] whose Max is `max`.
std::string stats_entry(const std::string& key, double max) {
  return "\"" + key + "\":{\"input_args\":[],\"input_kwargs\":{},\"output\":[{\"type\":\"torch.Tensor\",\"dtype\":"
         "\"torch.float16\",\"shape\":[2,2],\"Max\":" + std::to_string(max) + ",\"Min\":-1.0,\"Mean\":0.0,\"Norm\":2.0}]}";
}

std::string stats_dump(const std::string& framework, const std::vector<std::string>& entries) {
  std::string s = "{\"task\":\"statistics\",\"framework\":\"" + framework + "\",\"data\":{";
  for (size_t i = 0; i < entries.size(); ++i) s += (i ? "," : "") + entries[i];
  return s + "}}";
}

}  // namespace

// Cross-framework pairs (issue 29 §4): a MindSpore cell tree named differently from the PyTorch
// module tree pairs by key through a cell_mapping line, a renamed op through a data_mapping line
// (msprobe's YAML), and the first divergence is the mapped entry, not an order guess.
TEST(NumericDump, MappingFileRenamesCellsAndEntries) {
  TempDir ref, tgt, map;
  write(ref.path / "dump.json", stats_dump("pytorch", {stats_entry("Module.encoder.layer.0.Linear.forward.0", 1.0),
                                                       stats_entry("Module.encoder.layer.1.Linear.forward.0", 1.0),
                                                       stats_entry("Functional.gelu.0.forward", 1.0),
                                                       stats_entry("NPU.npu_fusion_attention.0.forward", 1.0)}));
  write(tgt.path / "dump.json", stats_dump("mindspore", {stats_entry("Cell.backbone.blocks.0.Dense.forward.0", 1.0),
                                                         stats_entry("Cell.backbone.blocks.1.Dense.forward.0", 1.5),
                                                         stats_entry("MintFunctional.gelu.0.forward", 1.0),
                                                         stats_entry("Functional.flash_attention_score.0.forward", 1.0)}));
  // Cell paths and class names differ (Dense vs Linear): cell_mapping lines; the attention op: a
  // data_mapping line (a whole entry key).
  write(map.path / "mapping.yaml", "backbone.blocks.0.Dense: encoder.layer.0.Linear\n"
                                   "backbone.blocks.1.Dense: encoder.layer.1.Linear\n"
                                   "'Functional.flash_attention_score.0.forward.output.0': "
                                   "NPU.npu_fusion_attention.0.forward.output.0\n");
  Dump r = read_dump(ref.path.string()), t = read_dump(tgt.path.string());
  KeyMapping m = read_key_mapping((map.path / "mapping.yaml").string());
  ASSERT_EQ(m.pairs.size(), 3u);
  CompareOptions opts;
  opts.mapping = &m;
  CompareResult res = compare_dumps(r, t, opts);
  EXPECT_FALSE(res.by_order);
  EXPECT_EQ(res.pairs.size(), 4u);
  EXPECT_TRUE(res.only_ref.empty());
  EXPECT_TRUE(res.only_target.empty());
  ASSERT_TRUE(res.first_divergence);
  EXPECT_EQ(t.entries[res.pairs[*res.first_divergence].target].key, "Cell.backbone.blocks.1.Dense.forward.0.output.0");
  EXPECT_EQ(r.entries[res.pairs[*res.first_divergence].ref].key, "Module.encoder.layer.1.Linear.forward.0.output.0");

  // Without the file only the gelu pair matches by key: fewer than half, so order pairing.
  CompareResult plain = compare_dumps(r, t);
  EXPECT_TRUE(plain.by_order);
}

// Issue 42 F-13: cell paths are looked up by hash over the key's whole dot-separated parts;
// the line first in the file wins, as a scan of the lines in order would choose.
TEST(NumericDump, MappingLooksUpWholePartsFirstLineWinning) {
  TempDir dir;
  write(dir.path / "m.yaml", "blocks.1.Dense: layer.1.Linear\nbackbone.blocks.1: encoder.layer.1\n"
                             "Dense: Linear\nFunctional.x.0.forward: Functional.y.0.forward\nlocks: nope\n");
  KeyMapping m = read_key_mapping((dir.path / "m.yaml").string());
  EXPECT_EQ(map_key(m, "Cell.backbone.blocks.1.Dense.forward.0", true), "Module.backbone.layer.1.Linear.forward.0");
  EXPECT_EQ(map_key(m, "Module.head.Dense.forward.0", false), "Module.head.Linear.forward.0");
  EXPECT_EQ(map_key(m, "Functional.x.0.forward", false), "Functional.y.0.forward");   // a whole key
  EXPECT_EQ(map_key(m, "Module.blocksX.forward.0", false), "Module.blocksX.forward.0");   // parts, not bytes
  EXPECT_EQ(map_key(m, "Torch.blocks.1.Dense", false), "Torch.blocks.1.Dense");        // modules only
}

TEST(NumericDump, MappingFromASpecialFileOrInFlowStyleIsRefused) {
  EXPECT_THROW(read_key_mapping("/dev/zero"), InputError);
  TempDir dir;
  write(dir.path / "flow.yaml", "{a.b: c.d, e.f: g.h}\n");
  EXPECT_THROW(read_key_mapping((dir.path / "flow.yaml").string()), InputError);
}

TEST(NumericDump, MappingFileErrorsNameTheLine) {
  TempDir dir;
  write(dir.path / "m.yaml", "# ok\na.b: c.d\nnot a mapping line\n");
  try {
    read_key_mapping((dir.path / "m.yaml").string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.offset(), 14u);  // "# ok\n" + "a.b: c.d\n"
    EXPECT_NE(std::string(e.what()).find("not a mapping line"), std::string::npos) << e.what();
  }
}
