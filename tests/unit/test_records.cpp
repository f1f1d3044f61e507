// Host tests of tools/run's record parser (tools/lib/records.py): recorded
// console outputs, clean, failing, panicking, truncated, garbage and forged,
// parsed with `tools/run --parse`, must give the right verdict and exit status.
#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <sys/wait.h>

namespace {

struct Parsed {
    std::string json;
    int status;
};

// Runs `tools/run --parse <log> --json -` (with --nonce when given).
Parsed parse(const std::string& log, const std::string& nonce = "")
{
    std::string command = std::string(TOLL_PYTHON) + " " + TOLL_SOURCE_DIR + "/tools/run --parse " +
                          TOLL_SOURCE_DIR + "/tests/unit/records/" + log + " --json -" +
                          (nonce.empty() ? "" : " --nonce " + nonce) + " 2>/dev/null";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
        out.append(buf.data(), n);
    int status = pclose(pipe);
    return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

bool has(const std::string& json, const std::string& text)
{
    return json.find(text) != std::string::npos;
}

} // namespace

TEST_CASE("record parser: a clean run is DONE and exits 0")
{
    Parsed p = parse("clean.log");
    CHECK(p.status == 0);
    CHECK(has(p.json, "\"outcome\": \"done\""));
    CHECK(has(p.json, "\"kern.loop_100k\": {\n      \"value\": 400012"));
    CHECK(has(p.json, "\"cpu.syscalls\": 12"));
}

TEST_CASE("record parser: a failed test fails the run, and a later PASS cannot hide it")
{
    Parsed p = parse("failed.log");
    CHECK(p.status != 0);
    CHECK(has(p.json, "\"outcome\": \"failed\""));
    CHECK(has(p.json, "expected x == y"));
    Parsed q = parse("fail_then_pass.log");
    CHECK(q.status != 0);
    CHECK(has(q.json, "\"status\": \"FAIL\""));
}

TEST_CASE("record parser: a panic, a truncated log and garbage are not successes")
{
    Parsed panic = parse("panic.log");
    CHECK(panic.status != 0);
    CHECK(has(panic.json, "\"outcome\": \"panic\""));
    CHECK(has(panic.json, "kernel page fault"));
    Parsed cut = parse("truncated.log");
    CHECK(cut.status != 0);
    CHECK(has(cut.json, "\"outcome\": \"incomplete\""));
    Parsed junk = parse("garbage.log");
    CHECK(junk.status != 0);
    CHECK(has(junk.json, "\"outcome\": \"garbage\""));
    Parsed bad = parse("malformed.log");
    CHECK(bad.status != 0);
    CHECK(has(bad.json, "\"outcome\": \"malformed\""));
}

TEST_CASE("record parser: with a nonce, untagged records earn nothing")
{
    Parsed forged = parse("forged_pass.log", "c0ffee");
    CHECK(forged.status == 0); // the real, tagged run passed
    CHECK(has(forged.json, "\"untrusted_records\": 2"));
    CHECK_FALSE(has(forged.json, "kern.evil")); // the forged PASS is not a test
    Parsed caught = parse("forged_fail.log", "c0ffee");
    CHECK(caught.status != 0); // forged PASS lines cannot hide a FAIL
    CHECK(has(caught.json, "\"untrusted_records\": 2"));
    CHECK_FALSE(has(caught.json, "kern.fake"));
    Parsed untagged = parse("clean.log", "c0ffee");
    CHECK(untagged.status != 0); // nothing tagged: nothing trusted
    CHECK(has(untagged.json, "\"outcome\": \"incomplete\""));
}
