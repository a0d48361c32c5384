import Foundation
import TestSupport

/// The states a power cut can leave of the files a command wrote.
///
/// Rebuilt from the fault shim's record (`EG_RECORD`), on the model ALICE and CrashMonkey
/// use. A file's pages are pending
/// until the file is synced (or durable at once when written through an `O_DSYNC`
/// descriptor), and reach the disk in any order and any subset; a file's creation and a
/// rename are pending until their directory is synced, and reach the disk in the order they
/// were made (a journaling file system commits them in order), each whole.
struct CrashStates {
  enum Step {
    /// Bytes written at an offset of a file (paths are relative to the recorded directory).
    case write(file: String, offset: Int, bytes: Data, durableAlone: Bool)
    /// A sync of a file (its pages before this are on the disk) or of a directory (its
    /// entries made so far are).
    case sync(String)
    /// A file made by an open with `O_CREAT`.
    case create(String)
    case rename(from: String, to: String)
    /// What the command printed (its acknowledgements).
    case printed(String)
  }

  /// The steps of a record made under `root` (a directory, with a slash); paths outside it
  /// are kept whole.
  static func steps(_ data: Data, root: String) -> [Step] {
    var steps: [Step] = []
    var at = data.startIndex
    func line() -> String? {
      guard let end = data[at...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
      defer { at = end + 1 }
      return String(decoding: data[at..<end], as: UTF8.self)
    }
    func relative(_ path: String) -> String { path.hasPrefix(root) ? String(path.dropFirst(root.count)) : path }
    func bytes(_ length: Int) -> Data {
      defer { at += length }
      return Data(data[at..<min(data.endIndex, at + length)])
    }
    while let header = line() {
      let fields = header.split(separator: " ", maxSplits: 3).map(String.init)
      switch fields.first {
      case "W":
        let offset = Int(fields[1]) ?? 0
        let written = bytes(Int(fields[2]) ?? 0)
        steps.append(.write(file: relative(fields[3]), offset: offset, bytes: written, durableAlone: false))
      case "D":
        if case .write(let file, let offset, let bytes, _)? = steps.last {
          steps[steps.count - 1] = .write(file: file, offset: offset, bytes: bytes, durableAlone: true)
        }
      case "S": steps.append(.sync(relative(String(header.dropFirst(2)))))
      case "C": steps.append(.create(relative(String(header.dropFirst(2)))))
      case "R":
        guard let from = line(), let to = line() else { return steps }
        steps.append(.rename(from: relative(from), to: relative(to)))
      case "O": steps.append(.printed(String(decoding: bytes(Int(fields[1]) ?? 0), as: UTF8.self)))
      default: return steps
      }
    }
    return steps
  }

  struct Page {
    let file: Int
    let offset: Int
    let bytes: Data
  }

  enum NameChange {
    case link(String, file: Int)
    case rename(from: String, to: String, file: Int)

    func apply(to names: inout [String: Int]) {
      switch self {
      case .link(let path, let file): names[path] = file
      case .rename(let from, let to, let file):
        names[from] = nil
        names[to] = file
      }
    }

    /// Whether a sync of `directory` makes it durable (a rename: either of its directories).
    func isDurable(after directory: String) -> Bool {
      func parent(_ path: String) -> String { (path as NSString).deletingLastPathComponent }
      switch self {
      case .link(let path, _): return parent(path) == directory
      case .rename(let from, let to, _): return parent(from) == directory || parent(to) == directory
      }
    }
  }

  /// Where each file's first content is: the files that existed before the command.
  let originals: [Int: String]
  var names: [String: Int]
  var durableNames: [String: Int]
  var pendingNames: [NameChange] = []
  var durable: [Page] = []
  var pending: [Page] = []
  /// What the command had printed so far.
  var printed = ""
  private var nextFile: Int

  /// Starts from the files of `before` (a copy of the recorded directory taken before the
  /// command), named by their paths relative to it.
  init(before: String) {
    let files = (FileManager.default.enumerator(atPath: before)?.compactMap { $0 as? String } ?? [])
      .filter { name in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: before + "/" + name, isDirectory: &isDirectory)
          && !isDirectory.boolValue
      }
      .sorted()
    names = Dictionary(uniqueKeysWithValues: files.enumerated().map { ($1, $0) })
    durableNames = names
    originals = Dictionary(uniqueKeysWithValues: files.enumerated().map { ($0, before + "/" + $1) })
    nextFile = files.count
  }

  /// The file `path` names now, made (as by an open with O_CREAT) when it names none.
  private mutating func file(_ path: String) -> Int { names[path] ?? link(path) }

  /// A new file named `path`: its name pending until its directory is synced.
  @discardableResult
  private mutating func link(_ path: String) -> Int {
    defer { nextFile += 1 }
    names[path] = nextFile
    pendingNames.append(.link(path, file: nextFile))
    return nextFile
  }

  mutating func apply(_ step: Step) {
    switch step {
    case .write(let path, let offset, let bytes, let alone):
      // A write of several pages may reach the disk in part: each 4 KiB page of it is a
      // write of its own (one page is taken as written whole, as the drive promises).
      let f = file(path)
      var at = offset
      var rest = bytes[...]
      while !rest.isEmpty {
        let take = min(rest.count, 4096 - at % 4096)
        let page = Page(file: f, offset: at, bytes: Data(rest.prefix(take)))
        if alone { durable.append(page) } else { pending.append(page) }
        rest = rest.dropFirst(take)
        at += take
      }
    case .sync(let path):
      if let f = names[path] {
        durable += pending.filter { $0.file == f }
        pending.removeAll { $0.file == f }
      } else {
        for change in pendingNames where change.isDurable(after: path) { change.apply(to: &durableNames) }
        pendingNames.removeAll { $0.isDurable(after: path) }
      }
    case .create(let path): link(path)
    case .rename(let from, let to):
      guard let f = names[from] else { return }
      let change = NameChange.rename(from: from, to: to, file: f)
      change.apply(to: &names)
      pendingNames.append(change)
    case .printed(let text): printed += text
    }
  }

  /// The cuts to try after the current step: how many of the pending name changes reached
  /// the disk, and which pending pages: all, none, and `samples` seeded choices.
  func cuts(samples: Int, using g: inout SeededGenerator) -> [Cut] {
    var cuts: Set<Cut> = [
      Cut(names: pendingNames.count, pages: Array(pending.indices)), Cut(names: 0, pages: []),
      Cut(names: pendingNames.count, pages: []), Cut(names: 0, pages: Array(pending.indices)),
    ]
    if pending.count + pendingNames.count > 1 {
      for _ in 0..<samples {
        cuts.insert(
          Cut(
            names: pendingNames.isEmpty ? 0 : g.int(0...pendingNames.count),
            pages: pending.indices.filter { _ in g.next() % 2 == 0 }))
      }
    }
    return cuts.sorted { ($0.names, $0.pages.count) > ($1.names, $1.pages.count) }
  }

  struct Cut: Hashable {
    let names: Int
    let pages: [Int]
  }

  /// Writes the files the cut leaves into `directory` (lock files left out: they hold no
  /// data and are made again on open).
  func materialize(_ cut: Cut, into directory: String) throws {
    var names = durableNames
    for change in pendingNames.prefix(cut.names) { change.apply(to: &names) }
    let pages = durable + cut.pages.map { pending[$0] }
    for (path, f) in names where !path.hasSuffix("lock.mdb") {
      let target = directory + "/" + path
      try FileManager.default.createDirectory(
        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      if let original = originals[f] {
        try FileManager.default.copyItem(atPath: original, toPath: target)
      } else {
        _ = FileManager.default.createFile(atPath: target, contents: nil)
      }
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: target))
      for page in pages where page.file == f {
        try handle.seek(toOffset: UInt64(page.offset))
        try handle.write(contentsOf: page.bytes)
      }
      try handle.close()
    }
  }
}
