internal import EventGraphText

/// How far an import got, as the store records it in a named checkpoint written in the
/// same transaction as each of its commits: a rerun with the same input resumes after it.
///
/// The checkpoint's name comes from the input's first line and the options that change
/// what the import makes (`import.` and 16 hex digits); its value says how many bytes of
/// input the committed objects came from and their hash, so a rerun checks that its input
/// starts with exactly those bytes before it skips them.
struct ImportCheckpoint: Hashable {
  /// The bytes of input consumed (through the last committed line and its line feed).
  var offset: Int
  /// The last line consumed.
  var line: Int
  /// The FNV-1a hash of those bytes (``JSONLinesInput/hash``).
  var hash: UInt64
  /// The objects imported.
  var objects: Int
  /// The log's last commit before the import's first: its commits come after.
  var after: UInt64
  /// Whether the input ended there.
  var complete: Bool

  /// The checkpoint name of an import whose input starts with `firstLine`.
  static func name(firstLine: ArraySlice<UInt8>, newIdentities: Bool) -> String {
    let h = JSONLinesInput.hash(JSONLinesInput.hashSeed, firstLine + [0, newIdentities ? 1 : 0])
    return "import." + hex(h)
  }

  /// The metadata key naming, in each of an import's commits, the checkpoint it writes.
  static let metadataKey = "import"

  static func hex(_ v: UInt64) -> String {
    let digits = String(v, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }

  var bytes: [UInt8] {
    let json: JSON = .object([
      JSONField("offset", .int(Int64(offset))), JSONField("line", .int(Int64(line))),
      JSONField("hash", .string(Self.hex(hash))), JSONField("objects", .int(Int64(objects))),
      JSONField("after", .int(Int64(after))), JSONField("complete", .bool(complete)),
    ])
    return Array(json.serialized().utf8)
  }

  init(offset: Int, line: Int, hash: UInt64, objects: Int, after: UInt64, complete: Bool) {
    (self.offset, self.line, self.hash, self.objects, self.after, self.complete) =
      (offset, line, hash, objects, after, complete)
  }

  /// Reads a checkpoint's value.
  ///
  /// - Throws: ``ErrorCode/corrupt`` when it is not one this code wrote.
  init(bytes: [UInt8], name: String) throws {
    guard let json = try? JSON(parsing: bytes), case .int(let offset)? = json["offset"],
      case .int(let line)? = json["line"], case .string(let hash)? = json["hash"], let h = UInt64(hash, radix: 16),
      case .int(let objects)? = json["objects"], case .int(let after)? = json["after"],
      case .bool(let complete)? = json["complete"], offset >= 0, line >= 0, objects >= 0, after >= 0
    else { throw StoreError.corrupt("checkpoint '\(name)' is not an import's checkpoint") }
    self.init(
      offset: Int(offset), line: Int(line), hash: h, objects: Int(objects), after: UInt64(after), complete: complete)
  }
}

/// The identities an interrupted import gave, in the order of its lines, read back from the
/// inserts of its commits (those whose metadata names its checkpoint).
struct ImportedIdentities {
  let store: EventStore
  let name: String
  private var nextCommit: UInt64
  private var pending: [ObjectID] = []
  private var index = 0

  init(store: EventStore, name: String, after: UInt64) {
    self.store = store
    self.name = name
    self.nextCommit = after + 1
  }

  /// The next identity, `nil` when the import's commits have no more inserts.
  mutating func next() throws -> ObjectID? {
    while index == pending.count {
      let records = try store.commitRecords(from: nextCommit, maxCommits: 64, maxBytes: 4 << 20)
      guard let last = records.last else { return nil }
      nextCommit = last.number + 1
      pending = []
      index = 0
      for r in records {
        let c = try r.decoded()
        guard c.metadata.extra[ImportCheckpoint.metadataKey] == name else { continue }
        for case .insert(let id, _) in c.events { pending.append(id) }
      }
    }
    defer { index += 1 }
    return pending[index]
  }
}
