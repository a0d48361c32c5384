#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// Measuring tools for the benchmarks: the clock the C baselines use, the
// process's memory as Linux accounts it, scratch directories, and the table
// the figures are printed in.

// MARK: - Clock

/// Seconds on CLOCK_MONOTONIC, the clock the C baselines time themselves
/// with, so Swift and C intervals are measured alike.
func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

/// Times `body`, which performs `operations` operations.
///
///     let m = try measure(operations: events) { try store.write { … } }
func measure(operations: Int, _ body: () throws -> Void) rethrows -> Measurement {
  let start = monotonicSeconds()
  try body()
  return Measurement(operations: operations, seconds: monotonicSeconds() - start)
}

/// CPU time the calling thread has used so far, in seconds: what a rate per CPU second
/// divides by when the machine is shared and wall time measures the neighbours too.
func threadCPUSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

/// CPU time this process has used so far, in seconds: in user space and in the kernel.
func processorSeconds() -> (user: Double, kernel: Double) {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return (
    Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
    Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
  )
}

/// Runs `body`, adding the CPU time it used to `total`.
func addingProcessorTime<R>(to total: inout (user: Double, kernel: Double), _ body: () throws -> R) rethrows -> R {
  let start = processorSeconds()
  defer {
    let end = processorSeconds()
    total = (total.user + end.user - start.user, total.kernel + end.kernel - start.kernel)
  }
  return try body()
}

// MARK: - Memory

/// Anonymous resident memory of this process in bytes (`RssAnon`).
///
/// Heap and stacks, but not the page cache or LMDB's file-backed map, which
/// the kernel can drop at will. 0 where /proc/self/status is missing.
func anonymousMemoryBytes() -> Int { procStatusBytes("RssAnon") ?? 0 }

/// Peak resident memory of this process in bytes (`VmHWM`).
///
/// File-backed pages (a scanned LMDB map) count too. 0 where /proc is missing.
func peakResidentBytes() -> Int { procStatusBytes("VmHWM") ?? 0 }

/// Resident memory of this process in bytes now (`VmRSS`).
///
/// File-backed pages count too. 0 where /proc is missing.
func residentBytes() -> Int { procStatusBytes("VmRSS") ?? 0 }

/// Restarts the `VmHWM` peak at the current resident size, so the next
/// `peakResidentBytes()` covers one benchmark only (Linux 4.0+).
///
/// - Returns: false where the kernel does not allow it.
@discardableResult
func resetPeakResident() -> Bool {
  let fd = open("/proc/self/clear_refs", O_WRONLY)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  let five: [UInt8] = [UInt8(ascii: "5")]
  return five.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == 1
}

/// Mebibytes, for table rows about memory or disk space.
func mebibytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

/// The value of a "Name:   1234 kB" line of /proc/self/status, in bytes.
private func procStatusBytes(_ field: String) -> Int? {
  guard let status = readSmallFile("/proc/self/status") else { return nil }
  let prefix = field + ":"
  for line in status.split(separator: "\n") where line.hasPrefix(prefix) {
    let words = line.dropFirst(prefix.count).split { $0 == " " || $0 == "\t" }
    guard let number = words.first.flatMap({ Int($0) }) else { return nil }
    return words.dropFirst().first == "kB" ? number * 1024 : number
  }
  return nil
}

/// Reads a /proc file, whose size `stat` reports as 0, to the end.
private func readSmallFile(_ path: String) -> String? {
  let fd = open(path, O_RDONLY)
  guard fd >= 0 else { return nil }
  defer { close(fd) }
  var contents: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4096)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    guard count > 0 else { return count == 0 ? String(decoding: contents, as: UTF8.self) : nil }
    contents.append(contentsOf: chunk[0..<count])
  }
}

// MARK: - Directories

/// A benchmark's scratch-directory failure.
struct TemporaryDirectoryError: Error, CustomStringConvertible {
  let description: String
}

/// Creates a new empty directory `/tmp/<prefix>.XXXXXX` and returns its path.
///
/// /tmp is used on purpose: the durable-commit figures depend on the disk
/// being synced to, and every store and baseline of a run shares it.
/// Remove it with `removeDirectory(_:)`.
///
/// - Throws: `TemporaryDirectoryError` when the prefix holds a "/" or
///   mkdtemp fails.
func temporaryDirectory(prefix: String) throws -> String {
  guard !prefix.isEmpty, !prefix.contains("/") else {
    throw TemporaryDirectoryError(description: "bad directory prefix \"\(prefix)\"")
  }
  var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
  let made = template.withUnsafeMutableBufferPointer { buffer in
    buffer.baseAddress.map { mkdtemp($0) != nil } ?? false
  }
  guard made else {
    let reason = String(cString: strerror(errno))
    throw TemporaryDirectoryError(description: "mkdtemp /tmp/\(prefix).XXXXXX: \(reason)")
  }
  return template.withUnsafeBufferPointer { buffer in
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

// MARK: - Table

/// The benchmark figures, each beside its baseline, printed as aligned plain
/// text for the terminal and as Markdown for Docs/.
///
/// The ratio is value ÷ baseline value: above 1 means more of the unit
/// (faster for a rate, slower for a time).
///
///     var table = BenchmarkTable(title: "Writes")
///     table.add("store batched", swift, baseline: c, baselineName: "raw LMDB")
///     print(table.plainText())
struct BenchmarkTable: Sendable {
  /// One figure and, optionally, the baseline it is compared with.
  struct Row: Sendable {
    let name: String
    let value: Double
    let unit: String
    let baselineName: String?
    let baselineValue: Double?

    /// value ÷ baseline value, when there is a nonzero baseline.
    var ratio: Double? {
      guard let baselineValue, baselineValue != 0 else { return nil }
      return value / baselineValue
    }
  }

  let title: String
  private(set) var rows: [Row] = []

  init(title: String) {
    self.title = title
  }

  /// Adds a figure, with its baseline figure when there is one.
  mutating func add(
    _ name: String, value: Double, unit: String, baseline: Double? = nil,
    baselineName: String? = nil
  ) {
    rows.append(
      Row(name: name, value: value, unit: unit, baselineName: baselineName, baselineValue: baseline)
    )
  }

  /// Adds the rate of a measurement, compared with a baseline's rate.
  mutating func add(
    _ name: String, _ measurement: Measurement, unit: String = "ops/s",
    baseline: Measurement? = nil, baselineName: String? = nil
  ) {
    add(
      name, value: measurement.rate, unit: unit, baseline: baseline?.rate,
      baselineName: baselineName)
  }

  /// The table as aligned columns of plain text, with the title above it.
  func plainText() -> String {
    let lines = [header] + rows.map(cells(of:))
    var widths = [Int](repeating: 0, count: header.count)
    for line in lines {
      for (column, cell) in line.enumerated() { widths[column] = max(widths[column], cell.count) }
    }
    let rule = String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))
    var text = [title, rule]
    for (index, line) in lines.enumerated() {
      let padded = line.indices.map { column in
        pad(line[column], to: widths[column], right: isNumeric(column))
      }
      text.append(trimmingTrailingSpaces(padded.joined(separator: "  ")))
      if index == 0 { text.append(rule) }
    }
    return text.joined(separator: "\n")
  }

  /// The table in GitHub Markdown, with the title as a heading.
  func markdown() -> String {
    func markdownRow(_ cells: [String]) -> String {
      let escaped = cells.map { $0.split(separator: "|", omittingEmptySubsequences: false) }
      return "| " + escaped.map { $0.joined(separator: "\\|") }.joined(separator: " | ") + " |"
    }
    let alignment = header.indices.map { isNumeric($0) ? "---:" : "---" }
    let table = [markdownRow(header), "| " + alignment.joined(separator: " | ") + " |"]
    return (["### \(title)", ""] + table + rows.map { markdownRow(cells(of: $0)) })
      .joined(separator: "\n")
  }

  // MARK: Cells

  /// Without any baseline, the three baseline columns are left out.
  private var hasBaselines: Bool { rows.contains { $0.baselineValue != nil } }

  private var header: [String] {
    let names = ["benchmark", "value", "unit"]
    return hasBaselines ? names + ["baseline", "baseline value", "ratio"] : names
  }

  /// Value, baseline value and ratio are aligned to the right.
  private func isNumeric(_ column: Int) -> Bool { [1, 4, 5].contains(column) }

  private func cells(of row: Row) -> [String] {
    let cells = [row.name, formatNumber(row.value), row.unit]
    guard hasBaselines else { return cells }
    return cells + [
      row.baselineName ?? "", row.baselineValue.map(formatNumber) ?? "",
      row.ratio.map(formatRatio) ?? "",
    ]
  }

  private func pad(_ cell: String, to width: Int, right: Bool) -> String {
    let fill = String(repeating: " ", count: max(0, width - cell.count))
    return right ? fill + cell : cell + fill
  }

  private func trimmingTrailingSpaces(_ line: String) -> String {
    var line = Substring(line)
    while line.last == " " { line = line.dropLast() }
    return String(line)
  }
}

// MARK: - Number formatting

/// A figure for a table: grouped digits from 100 up ("3,712,345"), two
/// decimals from 1 ("12.34"), three significant digits below ("0.00123").
func formatNumber(_ value: Double) -> String {
  guard value.isFinite else { return value.isNaN ? "n/a" : (value < 0 ? "-inf" : "inf") }
  let magnitude = abs(value)
  let sign = value < 0 ? "-" : ""
  if magnitude >= 1e18 { return "\(value)" }
  if magnitude >= 100 { return sign + grouped(UInt64(magnitude.rounded())) }
  if magnitude >= 1 || magnitude == 0 { return sign + fixed(magnitude, decimals: 2) }
  var decimals = 2
  var scaled = magnitude * 100
  while scaled < 100 && decimals < 12 {
    scaled *= 10
    decimals += 1
  }
  return sign + fixed(magnitude, decimals: decimals)
}

/// A ratio such as "0.84x" or "12.3x".
func formatRatio(_ ratio: Double) -> String {
  guard ratio.isFinite else { return "n/a" }
  return fixed(ratio, decimals: abs(ratio) >= 10 ? 1 : 2) + "x"
}

private func grouped(_ value: UInt64) -> String {
  let digits = Array(String(value))
  var out = ""
  for (index, digit) in digits.enumerated() {
    if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
    out.append(digit)
  }
  return out
}

private func fixed(_ value: Double, decimals: Int) -> String {
  var scale: UInt64 = 1
  for _ in 0..<decimals { scale *= 10 }
  guard abs(value) * Double(scale) < 9e18 else { return "\(value)" }
  let scaled = UInt64((abs(value) * Double(scale)).rounded())
  let fraction = String(scaled % scale)
  let padded = String(repeating: "0", count: decimals - fraction.count) + fraction
  return (value < 0 ? "-" : "") + String(scaled / scale) + (decimals > 0 ? "." + padded : "")
}
