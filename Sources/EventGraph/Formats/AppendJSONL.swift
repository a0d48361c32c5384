internal import EventGraphText

/// The result of appending one commit of a JSON Lines event file.
public struct AppendedCommit: Sendable {
  /// The file's label for the commit.
  public var label: String
  /// `nil` when the commit's events changed nothing.
  public var commit: CommitInfo?
}

/// The result of ``EventStore/append(_:)``.
public struct AppendResult: Sendable {
  public var commits: [AppendedCommit] = []
  /// Placeholders (`$p1`) and the identities they were given.
  public var placeholders: [(name: String, id: ObjectID)] = []
  /// The first refused commit, if any: earlier commits stay in place.
  public var failure: FormatError?
}

extension EventStore {
  /// Appends the events of a JSON Lines file (FORMATS.md, "Appending events"): consecutive
  /// lines with the same `commit` label form one commit, validated and applied atomically.
  ///
  /// Stops at the first refused commit and reports its line and why.
  ///
  /// - Throws: ``FormatError`` only for a file that cannot be read as JSON Lines at all.
  public func append(_ bytes: [UInt8]) throws(FormatError) -> AppendResult {
    let lines = try JSONLines.parse(bytes)
    var groups: [(label: String, lines: [(Int, JSON)])] = []
    for (line, json) in lines {
      guard case .string(let label)? = json["commit"] else {
        throw FormatError(line: line, field: "commit", message: "every line needs a string 'commit' label")
      }
      if groups.last?.label == label {
        groups[groups.count - 1].lines.append((line, json))
      } else {
        groups.append((label, [(line, json)]))
      }
    }
    var result = AppendResult()
    var placeholders: [String: ObjectID] = [:]
    for group in groups {
      var made: [(String, ObjectID)] = []
      var failedLine = group.lines.first?.0 ?? 0
      do {
        let commit = try write { tx in
          made = []
          var local = placeholders
          for (line, json) in group.lines {
            failedLine = line
            if let p = try Self.applyEvent(json, tx: tx, placeholders: &local) { made.append(p) }
          }
        }.commit
        for (name, id) in made { placeholders[name] = id }
        result.placeholders += made
        result.commits.append(AppendedCommit(label: group.label, commit: commit))
      } catch let e as FormatError {
        result.failure = e
        return result
      } catch {
        result.failure = FormatError(line: failedLine, message: "commit '\(group.label)' refused: \(error)")
        return result
      }
    }
    return result
  }

  /// Applies one event line through the transaction API; returns a new placeholder binding.
  private static func applyEvent(_ json: JSON, tx: Transaction, placeholders: inout [String: ObjectID]) throws
    -> (String, ObjectID)?
  {
    let r = try JSONObjectReader(json, context: "")
    try r.rejectUnknownKeys(allowed: ["commit", "type", "object", "entity", "key", "value", "target", "position"])
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
