import Foundation
import Testing

/// The bad-input catalogue: every command of `eventtool`, run as a user would with input
/// that is wrong, must exit with the right status, name what is wrong on standard error,
/// and leave the store exactly as it was.
///
/// The cases are in `BadInputCatalogue+*.swift`, one table per group of commands. Each case
/// runs on a fresh copy of a store made once per test process (``Fixtures``): the seed's
/// address book (v2, two people and their phones) or the company of Docs/examples.
@Suite("Bad input catalogue: a clear error, the right exit status, the store unchanged")
struct BadInputCatalogueTests {
  static let cases: [BadInput] =
    (BadInput.fileCases + BadInput.storeCases + BadInput.migrationCases + BadInput.maintenanceCases
    + BadInput.coreDataCases)
    .filter { $0.access == .owner || Permissions.canTest }

  @Test("refuses the input, names what is wrong, changes nothing", arguments: cases)
  func refuses(_ c: BadInput) throws {
    let fixtures = try Fixtures.shared.get()
    let dir = temporaryDirectory("catalogue")
    defer {
      Permissions.restore(dir)
      removeDirectory(dir)
    }
    let store = dir + "/store"
    try FileManager.default.copyItem(atPath: fixtures.path(c.fixture), toPath: store)
    try FileManager.default.copyItem(atPath: fixtures.path(c.fixture.other), toPath: dir + "/other")
    for (name, kind) in c.files.sorted(by: { $0.key < $1.key }) { try kind.make(at: dir + "/" + name) }
    let before = try StoreContents(store)
    // Another user may not be able to reach the checkout (a clone in a folder only its owner
    // may enter, as `mktemp -d` makes): the case then reads copies of the example files.
    let exampleFiles = c.access == .owner ? examples : try Permissions.copyExamples(into: dir)
    let arguments = c.arguments.map { c.expand($0, dir: dir, examples: exampleFiles) }
    let r: ToolRunner.Result
    if c.access == .owner {
      r = try ToolRunner.eventtool(arguments, input: c.input)
    } else {
      try Permissions.apply(c, dir: dir, store: store)
      r = try Permissions.runAsOtherUser(arguments, input: c.input)
      Permissions.restore(dir)
    }
    #expect(r.status == c.status, "stderr: \(r.err)")
    for name in c.names.map({ c.expand($0, dir: dir) }) {
      #expect(r.err.contains(name), "stderr does not name '\(name)': \(r.err)")
    }
    #expect(!r.err.contains("Fatal error") && !r.err.contains("crashed"), "\(r.err)")
    let after = try StoreContents(store)
    #expect(after.files == before.files, "the store's files changed")
    #expect(after.dump == before.dump, "the store's databases changed")
    for path in c.absent.map({ c.expand($0, dir: dir) }) {
      #expect(!FileManager.default.fileExists(atPath: path), "\(path) was made")
    }
  }

  @Test("the catalogue has at least 150 cases, over every command")
  func coversEveryCommand() {
    #expect(Self.cases.count >= 150)
    let commands = Set(Self.cases.compactMap(\.arguments.first))
    for name in [
      "init", "import", "append", "export", "log", "show", "stats", "fetch", "verify", "rebuild", "upcast", "rollback",
      "clone", "snapshot", "diagram", "demo", "reference", "help", "compact", "backup",
    ] {
      #expect(commands.contains(name), "no case for \(name)")
    }
  }
}

// MARK: - A case

/// One bad command line, what it must answer and what it must leave.
struct BadInput: Sendable, CustomTestStringConvertible {
  /// The store a case runs on; the other one is copied beside it (`@O`), for `clone --into`.
  enum Fixture: Sendable {
    case book, company
    var other: Fixture { self == .book ? .company : .book }
  }

  /// Who runs the tool and what it may do with the store.
  enum Access: Sendable {
    /// The store's owner, as every other test.
    case owner
    /// Another user, who owns the store but whose `data.mdb` is read-only.
    case readOnlyStore
    /// Another user, who may not read `data.mdb`.
    case unreadableStore
    /// Another user, who may not enter the store's directory.
    case unsearchableStore
    /// Another user: files made with ``FileKind/unreadable(_:)`` or
    /// ``FileKind/lockedDirectory`` are closed to them.
    case otherUser
  }

  var arguments: [String]
  var status: Int32
  /// What standard error must name: the file, line, key or flag at fault.
  var names: [String]
  var fixture = Fixture.book
  /// Files made in the case's directory before the run (`@D/NAME`).
  var files: [String: FileKind] = [:]
  var input: String? = nil
  var access = Access.owner
  /// Paths that must not exist afterwards: a store or snapshot that a refusal must not make.
  var absent: [String] = []

  /// `@S` the case's store, `@O` the other fixture's copy, `@D` the case's directory,
  /// `@X` Docs/examples, `@C` the Core Data fixtures (Tests/EventGraphCoreDataTests/Fixtures).
  func expand(_ text: String, dir: String, examples: String = examples) -> String {
    text.replacingOccurrences(of: "@S", with: dir + "/store").replacingOccurrences(of: "@O", with: dir + "/other")
      .replacingOccurrences(of: "@D", with: dir).replacingOccurrences(of: "@X", with: examples)
      .replacingOccurrences(of: "@C", with: CoreDataCommandTests.fixtures)
  }

  var testDescription: String {
    arguments.map { $0.contains(" ") || $0.isEmpty ? "'\($0)'" : $0 }.joined(separator: " ")
      + (access == .owner ? "" : " (\(access))")
  }
}

/// A file a case makes in its directory.
enum FileKind: Sendable, Equatable {
  case text(String)
  case bytes([UInt8])
  case directory
  case fifo
  /// Text that only the file's owner (root, when the tests run as root) may read.
  case unreadable(String)
  /// A directory that the other user may not write in.
  case lockedDirectory

  func make(at path: String) throws {
    switch self {
    case .text(let s): try Data(s.utf8).write(to: URL(fileURLWithPath: path))
    case .bytes(let b): try Data(b).write(to: URL(fileURLWithPath: path))
    case .directory, .lockedDirectory:
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    case .fifo: #expect(mkfifo(path, 0o644) == 0)
    case .unreadable(let s):
      try Data(s.utf8).write(to: URL(fileURLWithPath: path))
      #expect(chmod(path, 0) == 0)
    }
  }
}

// MARK: - Comparing a store before and after

/// Every file of a store directory, and every database as `mdb_dump` prints it.
///
/// `lock.mdb` holds LMDB's reader table, whose slots a reading process fills and clears:
/// its bytes may change without the store changing, so only its presence is compared; the
/// data file is compared byte for byte, and the dump of every named database besides.
struct StoreContents: Equatable {
  var files: [String: Data]
  var dump: String

  init(_ store: String) throws {
    var files: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: store) {
      files[name] = name == "lock.mdb" ? Data() : try Data(contentsOf: URL(fileURLWithPath: store + "/" + name))
    }
    self.files = files
    let dump = try ToolRunner.runSystem("/usr/bin/mdb_dump", ["-a", store])
    #expect(dump.status == 0, "mdb_dump: \(dump.err)")
    self.dump = dump.out
  }
}

// MARK: - The stores

/// The two stores every case starts from, made once per test process.
final class Fixtures: Sendable {
  let root: String

  static let shared = Result { try Fixtures() }

  static let people = """
    {"id": "p1", "entity": "AddressBook", "attributes": {"firstName": "A", "lastName": "B"}, "relationships": {"phones": ["t1", "t2"]}}
    {"id": "t1", "entity": "PhoneBook", "attributes": {"phoneNumber": "123", "type": 1}}
    {"id": "t2", "entity": "PhoneBook", "attributes": {"phoneNumber": "090", "type": 2}}
    {"id": "p2", "entity": "AddressBook", "attributes": {"firstName": "C", "lastName": "D"}}
    """

  private init() throws {
    root = temporaryDirectory("catalogue-fixtures")
    try Self.make(path(.book), model: "AddressBook.v2.model.json", objects: Self.people)
    try Self.make(path(.company), model: "Company.model.json", objects: CloneCommandTests.company)
  }

  func path(_ f: BadInput.Fixture) -> String { root + (f == .book ? "/book" : "/company") }

  private static func make(_ path: String, model: String, objects: String) throws {
    let created = try ToolRunner.eventtool(["init", path, "--model", examples + "/" + model])
    let imported = try ToolRunner.eventtool(["import", path, "-"], input: objects)
    guard created.status == 0, imported.status == 0 else {
      throw FixtureError(description: "cannot make \(path): \(created.err) \(imported.err)")
    }
  }

  struct FixtureError: Error, CustomStringConvertible { let description: String }
}

// MARK: - Another user

/// Running the tool as a user without some permission.
///
/// As root, permissions do not apply: the tool then runs as `nobody` through `setpriv`,
/// owning the case's directory. As any other user the files' modes are enough. Root without
/// `setpriv` leaves the permission cases out.
enum Permissions {
  static let isRoot = geteuid() == 0
  static let setpriv = "/usr/bin/setpriv"
  static let canTest = !isRoot || FileManager.default.isExecutableFile(atPath: setpriv)
  static let nobody = "65534"

  static func apply(_ c: BadInput, dir: String, store: String) throws {
    if isRoot {
      let chown = try ToolRunner.runSystem("/bin/chown", ["-R", "\(nobody):\(nobody)", dir])
      #expect(chown.status == 0, "\(chown.err)")
    }
    switch c.access {
    case .owner, .otherUser: break
    case .readOnlyStore: #expect(chmod(store + "/data.mdb", 0o444) == 0)
    case .unreadableStore: #expect(chmod(store + "/data.mdb", 0) == 0)
    case .unsearchableStore: #expect(chmod(store, 0) == 0)
    }
    for (name, kind) in c.files where kind == .lockedDirectory { #expect(chmod(dir + "/" + name, 0o555) == 0) }
  }

  /// Gives the case's directory back to its owner, readable, so it can be compared and removed.
  static func restore(_ dir: String) {
    _ = chmod(dir + "/store", 0o755)
    _ = chmod(dir + "/store/data.mdb", 0o644)
    for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: dir + "/" + name, isDirectory: &isDirectory), isDirectory.boolValue {
        _ = chmod(dir + "/" + name, 0o755)
      }
    }
  }

  static func runAsOtherUser(_ arguments: [String], input: String?) throws -> ToolRunner.Result {
    guard isRoot else { return try ToolRunner.eventtool(arguments, input: input) }
    return try ToolRunner.runSystem(
      setpriv, ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", try sharedTool.get()] + arguments,
      input: input)
  }

  /// Copies `Docs/examples` into the case's directory, which the other user will own.
  ///
  /// - Returns: the copy's path, for `@X`.
  static func copyExamples(into dir: String) throws -> String {
    let copy = dir + "/examples"
    try FileManager.default.copyItem(atPath: examples, toPath: copy)
    return copy
  }

  /// The built `eventtool`, copied into a folder every user may enter.
  ///
  /// The checkout's own `.build` may lie where only its owner can reach it. The copy is
  /// named by the build's size and time, so that later runs of the same build reuse it; it
  /// is written under a temporary name and renamed, for test processes side by side. Copies
  /// of other builds are left to the test runs that use them, and removed once a day old.
  static let sharedTool: Result<String, any Error> = Result {
    let built = ToolRunner.productsDirectory.appendingPathComponent("eventtool").path
    let attributes = try FileManager.default.attributesOfItem(atPath: built)
    let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
    let time = Int64((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("eventtool-shared-\(geteuid())").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    guard chmod(dir, 0o755) == 0 else { throw Fixtures.FixtureError(description: "cannot open \(dir) to others") }
    let tool = dir + "/eventtool-\(size)-\(time)"
    if FileManager.default.isExecutableFile(atPath: tool) { return tool }
    let dayAgo = Date().addingTimeInterval(-86_400)
    for old in try FileManager.default.contentsOfDirectory(atPath: dir) {
      let path = dir + "/" + old
      let made = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
      if let made, made < dayAgo { try? FileManager.default.removeItem(atPath: path) }
    }
    let partial = tool + ".\(getpid())"
    try FileManager.default.copyItem(atPath: built, toPath: partial)
    // Dated now, not as the build: the age above is the copy's.
    try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: partial)
    guard chmod(partial, 0o755) == 0, rename(partial, tool) == 0 else {
      throw Fixtures.FixtureError(description: "cannot place a copy of eventtool at \(tool)")
    }
    return tool
  }
}
