// MARK: - What a check reports

/// Damage found in an LMDB data file: what is wrong and where.
public struct FileDamage: Error, Sendable, Hashable, CustomStringConvertible {
  /// The data file.
  public var file: String
  /// The page at fault, when one is.
  public var page: Int?
  /// The database whose tree holds the page (`"(main)"`, `"(free pages)"`, or a name).
  public var database: String?
  /// What is wrong.
  public var detail: String

  public var description: String {
    var at: [String] = []
    if let database { at.append("database \(database)") }
    if let page { at.append("page \(page)") }
    return "\(file) is damaged" + (at.isEmpty ? "" : " (\(at.joined(separator: ", ")))") + ": \(detail)"
  }
}

// MARK: - Why a check could not be made

/// The file is not an LMDB data file at all (neither meta page has LMDB's magic number).
struct NotAnLMDBFile: Error {}

/// The meta page of the transaction a check was to walk was overwritten before it was read.
struct SnapshotOverwritten: Error {}
