import Foundation
import LMDB
import Testing

/// Runs `body` with a fresh, empty directory that is removed when `body` returns.
///
/// A closure rather than an object with a `deinit`, so that the directory outlives
/// everything the test opened in it.
func withTemporaryDirectory<R>(_ label: String = #function, _ body: (String) throws -> R) throws -> R {
  let safe = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
  let path = FileManager.default.temporaryDirectory
    .appendingPathComponent("lmdb-tests-\(safe)-\(UUID().uuidString.prefix(8))").path
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try body(path)
}

/// The async form of ``withTemporaryDirectory(_:_:)``, for tests that run tasks.
func withTemporaryDirectory<R>(_ label: String = #function, _ body: (String) async throws -> R) async throws -> R {
  let safe = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
  let path = FileManager.default.temporaryDirectory
    .appendingPathComponent("lmdb-tests-\(safe)-\(UUID().uuidString.prefix(8))").path
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try await body(path)
}

/// Opens a new environment in `directory` with one named database.
func openEnvironment(
  in directory: String, options: EnvironmentOptions = .init(), database: String = "test",
  flags: DatabaseFlags = []
) throws -> (Environment, Database) {
  let env = try Environment(path: directory, options: options)
  let db = try #require(try env.openDatabase(database, flags: flags))
  return (env, db)
}

/// The UTF-8 bytes of `string`.
func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

/// A test failure that is not LMDB's, to make a transaction body throw.
struct Boom: Error, Equatable {}

/// A value shared between threads in a test, guarded by a lock.
final class Locked<Value>: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// Runs each of `bodies` on its own thread and waits for all of them.
///
/// Real threads rather than a dispatch pool, so that every body runs at once even on a
/// two-core machine; errors are collected and returned rather than lost.
func runOnThreads(_ bodies: [@Sendable () throws -> Void]) -> [any Error] {
  let errors = Locked<[any Error]>([])
  let group = DispatchGroup()
  for body in bodies {
    group.enter()
    let thread = Thread {
      defer { group.leave() }
      do { try body() } catch { errors.withLock { $0.append(error) } }
    }
    thread.stackSize = 1 << 20
    thread.start()
  }
  group.wait()
  return errors.withLock { $0 }
}

extension BigEndianKey {
  /// Reads a copied key, for tests that collect keys out of the map.
  static func decode(_ bytes: [UInt8]) -> UInt64? { bytes.withUnsafeBytes { decode($0) } }
}
