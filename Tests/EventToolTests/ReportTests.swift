import Foundation
import TestSupport
import Testing

/// `eventtool report`'s page, loaded in a real headless browser (Debian's chromium).
@Suite("eventtool report: a page loaded in headless chromium")
struct ReportTests {
  /// Debian's chromium, which Tools/setup installs.
  static let chromium = URL(fileURLWithPath: "/usr/bin/chromium")

  /// Chromium's arguments for one headless run with a profile of its own in `dir`.
  static func headless(_ dir: String, _ more: [String]) -> [String] {
    ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(dir)/profile"] + more
  }

  /// The page's DOM after its script ran, for the address `page#fragment`.
  static func dom(_ dir: String, _ page: String, _ fragment: String) throws -> String {
    let r = try runProgram(at: chromium, headless(dir, ["--dump-dom", "file://\(page)#\(fragment)"]))
    #expect(r.status == 0, "chromium: \(r.err)")
    return r.out
  }

  /// The state table's rows (name, value, changed) in a dumped DOM.
  static func stateRows(_ dom: String) -> [(String, String, Bool)] {
    guard let start = dom.range(of: "<table id=\"state\">"),
      let end = dom.range(of: "</table>", range: start.upperBound..<dom.endIndex)
    else { return [] }
    let table = String(dom[start.upperBound..<end.lowerBound])
    return table.components(separatedBy: "<tr").dropFirst().compactMap { row in
      guard let th = row.range(of: "<th>"), let thEnd = row.range(of: "</th>"),
        let td = row.range(of: "\">", range: thEnd.upperBound..<row.endIndex) ?? row.range(of: "<td>"),
        let tdEnd = row.range(of: "</td>")
      else { return nil }
      return (
        String(row[th.upperBound..<thEnd.lowerBound]), String(row[td.upperBound..<tdEnd.lowerBound]),
        row.hasPrefix(" class=\"changed\"")
      )
    }
  }

  @Test(
    "the seed's report loads without a script error, each view makes its own screenshot, and time travel shows 一寸法師 with and without his landline"
  )
  func seedReport() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    #expect(try ToolRunner.eventtool(["demo", dir + "/demo"]).status == 0)
    let store = dir + "/demo/book.store"
    let page = dir + "/book.html"
    let made = try ToolRunner.eventtool(["report", store, "--out", page])
    #expect(made.status == 0, "\(made.err)")
    // The landline: linked in one commit, given up in the next (the demo's step 5, upcast).
    let log = try ToolRunner.eventtool(["log", store, "--object", "AddressBook/3", "--json"]).out
    let commits = log.split(separator: "\n").compactMap { line -> Int? in
      guard line.contains("\"link\"") || line.contains("\"unlink\""),
        let r = line.range(of: "\"commit\": ")
      else { return nil }
      return Int(line[r.upperBound...].prefix { $0.isNumber })
    }
    try #require(commits.count == 2, "\(log)")
    let (with, without) = (commits[0], commits[1])
    let linked = try Self.dom(dir, page, "view=objects&object=AddressBook/3&at=\(with)")
    #expect(linked.contains("data-ready=\"yes\"") && !linked.contains("data-error"), "the page's script failed")
    let phones = Self.stateRows(linked).first { $0.0 == "phones" }
    #expect(phones?.1.hasPrefix("[PhoneBook/") == true, "\(Self.stateRows(linked))")
    let unlinked = try Self.dom(dir, page, "view=objects&object=AddressBook/3&at=\(without)&from=\(with)")
    let rows = Self.stateRows(unlinked)
    #expect(rows.contains { $0.0 == "firstName" && $0.1 == "'一寸'" && !$0.2 }, "\(rows)")
    #expect(
      rows.contains { $0.0 == "phones" && $0.1 == "—" && $0.2 }, "the landline's removal is not highlighted: \(rows)")
    // Each view, screenshotted: a picture of its own.
    var shots: [Data] = []
    for view in ["summary", "model", "timeline", "objects"] {
      let png = dir + "/\(view).png"
      let r = try runProgram(
        at: Self.chromium,
        Self.headless(
          dir, ["--window-size=1200,900", "--screenshot=\(png)", "file://\(page)#view=\(view)&object=AddressBook/3"]))
      #expect(r.status == 0, "chromium: \(r.err)")
      let data = try #require(FileManager.default.contents(atPath: png), "no screenshot of \(view)")
      #expect(data.count > 5_000 && data.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(view): \(data.count) bytes")
      shots.append(data)
    }
    #expect(Set(shots).count == 4, "two views look the same")
  }

  @Test("--object limits the browser to a subgraph and --max-size bounds its data, saying how many objects it left out")
  func limits() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    #expect(try ToolRunner.eventtool(["demo", dir + "/demo"]).status == 0)
    let store = dir + "/demo/book.store"
    let whole = try ToolRunner.eventtool(["report", store, "--out", dir + "/whole.html"])
    let sub = try ToolRunner.eventtool(["report", store, "--out", dir + "/sub.html", "--object", "AddressBook/3"])
    #expect(whole.status == 0 && sub.status == 0, "\(whole.err)\(sub.err)")
    // 一寸法師 and the landline he had: the other people and their phones are not reached.
    #expect(whole.out.contains(" 6 of 6 objects") && sub.out.contains(" 2 of 2 objects"), "\(whole.out)\(sub.out)")
    let small = try ToolRunner.eventtool(["report", store, "--out", dir + "/small.html", "--max-size", "1000"])
    #expect(small.status == 0 && small.out.contains("left out by --max-size"), "\(small.out)")
    let dom = try Self.dom(dir, dir + "/small.html", "view=objects")
    #expect(dom.contains("left out to keep the page within its size") && dom.contains("data-ready=\"yes\""))
    let full = try #require(FileManager.default.contents(atPath: dir + "/whole.html")).count
    let bounded = try #require(FileManager.default.contents(atPath: dir + "/small.html")).count
    #expect(bounded < full)
  }

  @Test("a truncated store's report marks its base on the timeline and still browses its objects")
  func truncatedStore() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    #expect(try ToolRunner.eventtool(["demo", dir + "/demo"]).status == 0)
    let store = dir + "/demo/book.store"
    let cut = try ToolRunner.eventtool(["truncate", store, "--keep-commits", "2"])
    #expect(cut.status == 0, "\(cut.err)")
    let page = dir + "/cut.html"
    let made = try ToolRunner.eventtool(["report", store, "--out", page])
    #expect(made.status == 0 && made.out.contains(" 6 of 6 objects"), "\(made.out)\(made.err)")
    let html = String(decoding: try #require(FileManager.default.contents(atPath: page)), as: UTF8.self)
    #expect(html.contains("base: history before sequence"), "no base on the timeline")
    let dom = try Self.dom(dir, page, "view=objects&object=AddressBook/3")
    #expect(dom.contains("data-ready=\"yes\"") && Self.stateRows(dom).contains { $0.0 == "firstName" })
  }
}
