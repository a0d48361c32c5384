internal import EventGraphText

/// The result of appending one commit of a JSON Lines event file.
public struct AppendedCommit: Sendable {
  /// The file's label for the commit.
  public var label: String
  /// `nil` when the commit's events changed nothing.
  ///
  /// For a duplicate, the first commit that carried the idempotency key.
  public var commit: CommitInfo?
  /// Whether the commit's idempotency key was already in the store: nothing was appended,
  /// and ``commit`` is the commit that carried the key first.
  public var isDuplicate = false
  /// The placeholders the commit inserted, with their identities (a duplicate's are read
  /// back from the first commit).
  public var placeholders: [(name: String, id: ObjectID)] = []
  /// The commit's first line in the file.
  public var line = 0

  public init(label: String, commit: CommitInfo?) {
    self.label = label
    self.commit = commit
  }
}

/// The result of ``EventStore/append(_:)``.
public struct AppendResult: Sendable {
  public var commits: [AppendedCommit] = []
  /// Placeholders (`$p1`) and the identities they were given.
  public var placeholders: [(name: String, id: ObjectID)] = []
  /// The first refused commit, if any: earlier commits stay in place.
  public var failure: FormatError?
  /// When the refusal was an expectation that did not hold: what moved, and to what.
  public var conflict: ConflictError?
}

extension EventStore {
  /// Appends the events of a JSON Lines file (FORMATS.md, "Appending events"): consecutive
  /// lines with the same `commit` label form one commit, validated and applied atomically.
  ///
  /// Stops at the first refused commit and reports its line and why.
  ///
  /// - Throws: ``FormatError`` only when the input cannot be read.
  public func append(_ bytes: [UInt8]) throws(FormatError) -> AppendResult {
    try append(from: JSONLinesInput(bytes: bytes)) { _ in }
  }

  /// Appends the events of JSON Lines input a commit at a time, calling `landed` as soon as
  /// each commit is durable (or found to be a duplicate), before the next line is read.
  ///
  /// The first line of a commit may carry `"idempotencyKey"` (a commit whose key is
  /// already in the store is skipped and reported as a duplicate) and `"expect"`
  /// (`{"Entity/N": version}` or `{"logEnd": N}`, as ``Expectation``: a commit whose
  /// expectation does not hold is refused, and the append stops there).
  ///
  /// ```swift
  /// let result = try store.append(from: JSONLinesInput(path: "changes.jsonl")) { c in
  ///   print(c.label, c.commit?.firstSequence ?? 0, c.isDuplicate)
  /// }
  /// ```
  ///
  /// - Throws: ``FormatError`` when the input cannot be read (what `landed` throws stops the
  ///   append, as a refused commit, in ``AppendResult/failure``).
  public func append(from input: JSONLinesInput, landed: (AppendedCommit) throws -> Void) throws(FormatError)
    -> AppendResult
  {
    var result = AppendResult()
    var placeholders: [String: ObjectID] = [:]
    var group: (label: String, lines: [(Int, JSON)])?
    // Commits the group gathered so far; false when it was refused (the append stops).
    func flush() -> Bool {
      guard let g = group else { return true }
      group = nil
      switch commitGroup(g.label, g.lines, placeholders: placeholders) {
      case .success(let landedCommit):
        for (name, id) in landedCommit.placeholders { placeholders[name] = id }
        result.placeholders += landedCommit.placeholders
        result.commits.append(landedCommit)
        do {
          try landed(landedCommit)
        } catch {
          result.failure = FormatError(line: g.lines.last?.0 ?? 0, message: "\(error)")
          return false
        }
        return true
      case .failure(let refusal):
        result.failure = refusal.error
        result.conflict = refusal.conflict
        return false
      }
    }
    while let (line, bytes) = try input.next() {
      let json: JSON
      do {
        json = try JSON(parsing: bytes)
      } catch {
        // The line may belong to the commit gathered so far: that commit is not made either.
        result.failure = FormatError(line: line, message: "invalid JSON at column \(error.column): \(error.message)")
        return result
      }
      guard case .string(let label)? = json["commit"] else {
        result.failure = FormatError(line: line, field: "commit", message: "every line needs a string 'commit' label")
        return result
      }
      if group?.label == label {
        group?.lines.append((line, json))
      } else {
        guard flush() else { return result }
        group = (label, [(line, json)])
      }
    }
    _ = flush()
    return result
  }

  /// Why a commit of an append was refused.
  private struct Refusal: Error {
    var error: FormatError
    var conflict: ConflictError?
  }

  /// Makes one commit of an append: its first line's key and expectations, then its events.
  private func commitGroup(_ label: String, _ lines: [(Int, JSON)], placeholders: [String: ObjectID])
    -> Result<AppendedCommit, Refusal>
  {
    let firstLine = lines.first?.0 ?? 0
    var failedLine = firstLine
    var made: [(String, ObjectID)] = []
    var madeOnLine: [Int] = []
    var appended = AppendedCommit(label: label, commit: nil)
    appended.line = firstLine
    do {
      let (key, expect) = try Self.commitOptions(lines)
      var metadata = CommitMetadata()
      metadata.idempotencyKey = key
      let result = try write(metadata: metadata) { tx in
        made = []
        madeOnLine = []
        failedLine = firstLine
        var local = placeholders
        try tx.require(try Self.expectations(expect, tx: tx, placeholders: local))
        for (line, json) in lines {
          failedLine = line
          if let p = try Self.applyEvent(json, tx: tx, placeholders: &local) {
            made.append(p)
            madeOnLine.append(line)
          }
        }
      }
      appended.commit = result.commit
      if result.isDuplicate, let first = result.commit {
        // The key landed before (a rerun): the commit is reported, its placeholders found again.
        appended.isDuplicate = true
        appended.placeholders = try duplicatePlaceholders(lines, of: first, key: key ?? "")
      } else {
        appended.placeholders = made
      }
      return .success(appended)
    } catch let e as FormatError {
      return .failure(Refusal(error: e))
    } catch let e as ConflictError {
      return .failure(
        Refusal(error: FormatError(line: firstLine, message: "commit '\(label)' refused: \(e)"), conflict: e))
    } catch let e as StoreError {
      // The objects the commit inserted are named by the placeholders the file gave them.
      var origins: [ObjectID: StoreError.ObjectName.Origin] = [:]
      for ((name, id), line) in zip(made, madeOnLine) { origins[id] = .placeholder(name, line: line) }
      let named = e.renamingObjects { o in
        guard let origin = origins[o.id] else { return o }
        var named = o
        named.origin = origin
        return named
      }
      return .failure(Refusal(error: FormatError(line: failedLine, message: "commit '\(label)' refused: \(named)")))
    } catch {
      return .failure(Refusal(error: FormatError(line: failedLine, message: "commit '\(label)' refused: \(error)")))
    }
  }

  /// The idempotency key and expectations on a commit's first line; refused on any other.
  private static func commitOptions(_ lines: [(Int, JSON)]) throws -> (String?, JSON?) {
    for (line, json) in lines.dropFirst() {
      for key in ["idempotencyKey", "expect"] where json[key] != nil {
        throw FormatError(line: line, field: key, message: "only the first line of a commit may carry '\(key)'")
      }
    }
    guard let (line, json) = lines.first else { return (nil, nil) }
    var key: String?
    switch json["idempotencyKey"] {
    case nil, .null?: break
    case .string(let k)? where !k.utf8.isEmpty && k.utf8.count <= 400: key = k
    case .string?:
      throw FormatError(line: line, field: "idempotencyKey", message: "an idempotency key is 1 to 400 bytes of UTF-8")
    case let other?:
      throw FormatError(
        line: line, field: "idempotencyKey", message: "expected a string, found \(other.kindDescription)")
    }
    switch json["expect"] {
    case nil, .null?: return (key, nil)
    case .object(let fields)? where !fields.isEmpty: return (key, .object(fields))
    case let other?:
      throw FormatError(
        line: line, field: "expect",
        message:
          "expected an object of versions ({\"Entity/N\": version} or {\"logEnd\": sequence}), found \(other.kindDescription)"
      )
    }
  }

  /// The expectations of an `expect` object, its objects resolved in `tx` (deleted objects
  /// too: their versions are still known).
  private static func expectations(_ json: JSON?, tx: Transaction, placeholders: [String: ObjectID]) throws
    -> [Expectation]
  {
    guard let fields = json?.objectFields else { return [] }
    return try fields.map { f in
      guard case .int(let n) = f.value, n >= 0 else {
        throw JSONReadError(context: "expect.\(f.key)", message: "a version is an integer, 0 or more")
      }
      if f.key == "logEnd" { return .logEnd(UInt64(n)) }
      if f.key.hasPrefix("$") {
        guard let id = placeholders[f.key] else {
          throw JSONReadError(
            context: "expect.\(f.key)", message: "placeholder '\(f.key)' is not inserted by an earlier commit")
        }
        return .object(id, version: UInt64(n))
      }
      guard let (name, id) = ObjectID.parse(f.key), let named = tx.model.entity(named: name),
        let e = try tx.entityID(of: id), tx.model.isKind(e, of: named.id)
      else {
        throw JSONReadError(
          context: "expect.\(f.key)", message: "no object \(f.key) (expect names objects as Entity/N, or logEnd)")
      }
      return .object(id, version: UInt64(n))
    }
  }

  /// The placeholders of a commit whose key was already in the store, read back from the
  /// first commit's inserts, in order; refused when that commit inserted other objects.
  private func duplicatePlaceholders(_ lines: [(Int, JSON)], of first: CommitInfo, key: String) throws
    -> [(String, ObjectID)]
  {
    let inserts = lines.compactMap { (line, json) -> (Int, String, String)? in
      guard case .string("insert")? = json["type"], case .string(let p)? = json["object"] else { return nil }
      return (line, p, json["entity"]?.stringValue ?? "")
    }
    guard !inserts.isEmpty else { return [] }
    let logged = try commitRecords(from: first.number, maxCommits: 1).first?.decoded().events ?? []
    let inserted = logged.compactMap { e -> (ObjectID, EntityID)? in
      if case .insert(let id, let entity) = e { return (id, entity) }
      return nil
    }
    let line = inserts[0].0
    guard inserted.count == inserts.count else {
      throw FormatError(
        line: line, field: "idempotencyKey",
        message:
          "'\(key)' was committed (commit \(first.number)) with \(inserted.count) insert(s), this commit has \(inserts.count): not the same commit"
      )
    }
    return try zip(inserts, inserted).map { (given, logged) in
      guard model.entity(logged.1)?.name == given.2 else {
        throw FormatError(
          line: given.0, field: "idempotencyKey",
          message:
            "'\(key)' was committed (commit \(first.number)) inserting a \(model.entity(logged.1)?.name ?? "?") where this line inserts a \(given.2): not the same commit"
        )
      }
      return (given.1, logged.0)
    }
  }

  /// Applies one event line through the transaction API; returns a new placeholder binding.
  private static func applyEvent(_ json: JSON, tx: Transaction, placeholders: inout [String: ObjectID]) throws
    -> (String, ObjectID)?
  {
    let r = try JSONObjectReader(json, context: "")
    try r.rejectUnknownKeys(allowed: [
      "commit", "type", "object", "entity", "key", "value", "target", "position", "idempotencyKey", "expect",
    ])
    let type = try r.string("type")
    let objectText = try r.string("object")
    func resolve(_ text: String) throws -> ObjectID {
      if text.hasPrefix("$") {
        guard let id = placeholders[text] else {
          throw JSONReadError(context: "object", message: "placeholder '\(text)' is not inserted by an earlier line")
        }
        return id
      }
      return try tx.resolve(text)
    }
    switch type {
    case "insert":
      guard objectText.hasPrefix("$") else {
        throw JSONReadError(
          context: "object", message: "an inserted object is named by a placeholder starting with '$'")
      }
      guard placeholders[objectText] == nil else {
        throw JSONReadError(context: "object", message: "placeholder '\(objectText)' is already used")
      }
      let id = try tx.insert(try r.string("entity"))
      placeholders[objectText] = id
      return (objectText, id)
    case "set":
      let o = try resolve(objectText)
      let key = try r.string("key")
      let a = try tx.model.attribute(key, of: try tx.requireObject(o).entity)
      let value: Value?
      do {
        value = try Value.fromJSON(r.optionalValue("value") ?? .null, as: a.type)
      } catch {
        throw JSONReadError(context: "value", message: error.description)
      }
      try tx.set(o, key, value)
    case "link":
      try tx.link(
        try resolve(objectText), try r.string("key"), try resolve(try r.string("target")),
        at: try r.optionalInt("position"))
    case "unlink":
      try tx.unlink(try resolve(objectText), try r.string("key"), try resolve(try r.string("target")))
    case "delete":
      try tx.delete(try resolve(objectText))
    default:
      throw JSONReadError(context: "type", message: "unknown event type '\(type)' (insert, set, link, unlink, delete)")
    }
    return nil
  }
}
