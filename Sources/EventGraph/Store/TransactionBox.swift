internal import LMDB

/// An open LMDB transaction owned by the objects of one read or one commit batch that
/// share it: a ``Snapshot``'s reader, a batch's ``Transaction``s and ``Projector``s.
///
/// The LMDB module lends a transaction's C handle only for the length of a call, so what
/// must reach the transaction across calls keeps the `~Copyable` transaction itself, here.
/// The box ends it (``end()``, ``commit()``) when the read or the batch it belongs to
/// ends; an object kept past that — a snapshot a caller held on to — then gets
/// ``LMDBError/transactionEnded`` instead of a freed handle.
final class TransactionBox<T: TransactionReading & ~Copyable>: TransactionReading {
  private var txn: T?

  init(_ txn: consuming T) { self.txn = consume txn }

  func withAccess<R: ~Copyable>(_ body: (borrowing TransactionAccess) throws(LMDBError) -> R) throws(LMDBError)
    -> R
  {
    switch txn {
    case .some(let t): return try t.withAccess(body)
    case .none: throw LMDBError.transactionEnded
    }
  }

  /// Ends the transaction (aborts a write transaction not committed).
  func end() { txn = nil }
}

extension TransactionBox: TransactionWriting where T: TransactionWriting & ~Copyable {}

/// A snapshot's transaction.
typealias ReadHandle = TransactionBox<ReadTransaction>

/// A commit batch's transaction.
typealias WriteHandle = TransactionBox<WriteTransaction>

extension Environment {
  /// Runs `body` with a read transaction that what `body` makes may share (a
  /// ``GraphReader``), ended when `body` returns.
  func readHandle<R>(_ body: (ReadHandle) throws -> R) throws -> R {
    let handle = ReadHandle(try beginRead())
    defer { handle.end() }
    return try body(handle)
  }
}

extension TransactionBox where T == WriteTransaction {
  /// Commits the transaction; it is gone either way.
  func commit() throws(LMDBError) {
    guard let t = txn.take() else { throw LMDBError.transactionEnded }
    try t.commit()
  }

  /// Runs `body` with the operations of this box acting in a nested transaction, whose
  /// changes become part of this one when `body` returns and are discarded alone when it
  /// throws.
  func nested<R>(_ body: () throws -> R) throws -> R {
    try inPlace { (t: inout WriteTransaction) throws(LMDBError) in try t.beginNested() }
    let result: R
    do {
      result = try body()
    } catch {
      try? inPlace { (t: inout WriteTransaction) throws(LMDBError) in try t.endNested(commit: false) }
      throw error
    }
    try inPlace { (t: inout WriteTransaction) throws(LMDBError) in try t.endNested(commit: true) }
    return result
  }

  private func inPlace(_ body: (inout WriteTransaction) throws(LMDBError) -> Void) throws(LMDBError) {
    guard var t = txn.take() else { throw LMDBError.transactionEnded }
    var failure: LMDBError?
    do { try body(&t) } catch { failure = error }
    txn = consume t
    if let failure { throw failure }
  }
}
