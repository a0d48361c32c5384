import EventGraphCrypto
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite("KeyFile: the key-encryption key's file")
struct KeyFileTests {
  @Test("generate writes the key's 32 bytes with mode 0600, and load reads the same key")
  func generateAndLoad() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/store.key"
      let key = try KeyFile.generate(at: path)
      #expect(try fileBytes(path) == key.bytesForTesting)
      #expect(try permissions(path) == 0o600)
      let loaded = try KeyFile.load(from: path)
      #expect(loaded.bytesForTesting == key.bytesForTesting)
      #expect(loaded.fingerprint == key.fingerprint)
      let other = try KeyFile.generate(at: dir + "/other.key")
      #expect(other.bytesForTesting != key.bytesForTesting)
    }
  }

  @Test("generate never overwrites an existing file, which keeps its bytes")
  func generateRefusesExisting() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/store.key"
      let first = try KeyFile.generate(at: path)
      let error = try cryptoError { _ = try KeyFile.generate(at: path) }
      #expect(error.code == .keyFileExists)
      #expect(error.path == path)
      #expect(error.message.contains(path))
      #expect(try fileBytes(path) == first.bytesForTesting)
      // Nor any other file, whatever it holds.
      let notes = dir + "/notes"
      try Data("not a key".utf8).write(to: URL(fileURLWithPath: notes))
      let overNotes = try cryptoError { _ = try KeyFile.generate(at: notes) }
      #expect(overNotes.code == .keyFileExists)
      #expect(try fileBytes(notes) == Array("not a key".utf8))
    }
  }

  @Test("generate in a directory that does not exist fails as I/O, naming the path")
  func generateNoDirectory() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/missing/store.key"
      let error = try cryptoError { _ = try KeyFile.generate(at: path) }
      #expect(error.code == .keyFileIO)
      #expect(error.message.contains(path))
    }
  }

  @Test("load refuses a missing file")
  func loadMissing() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/store.key"
      let error = try cryptoError { _ = try KeyFile.load(from: path) }
      #expect(error.code == .keyFileMissing)
      #expect(error.path == path)
      #expect(error.message.contains(path))
    }
  }

  @Test("load refuses a directory and a pipe as not regular files")
  func loadNotRegular() throws {
    try withTemporaryDirectory { dir in
      let directory = dir + "/store.key"
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
      let error = try cryptoError { _ = try KeyFile.load(from: directory) }
      #expect(error.code == .keyFileNotRegular)
      #expect(error.path == directory)
      #expect(error.message.contains(directory))
      #expect(error.message.contains("directory"))
      // A FIFO would block a plain open until a writer came: refused at once instead.
      let fifo = dir + "/fifo.key"
      #expect(mkfifo(fifo, 0o600) == 0)
      let pipe = try cryptoError { _ = try KeyFile.load(from: fifo) }
      #expect(pipe.code == .keyFileNotRegular)
      #expect(pipe.message.contains(fifo))
    }
  }

  @Test("load refuses a file that is not exactly 32 bytes, saying the size found", arguments: [0, 31, 33, 64])
  func loadWrongSize(size: Int) throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/store.key"
      try Data(repeating: 0x5A, count: size).write(to: URL(fileURLWithPath: path))
      try setPermissions(path, 0o600)
      let error = try cryptoError { _ = try KeyFile.load(from: path) }
      #expect(error.code == .keyFileSize)
      #expect(error.path == path)
      #expect(error.message.contains(path))
      #expect(error.message.contains("\(size) bytes"))
    }
  }

  @Test(
    "load refuses a file its group or others may use, saying the mode and chmod 600",
    arguments: [0o640, 0o604, 0o644, 0o601, 0o610, 0o620, 0o602])
  func loadWrongMode(mode: Int) throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/store.key"
      let key = try KeyFile.generate(at: path)
      try setPermissions(path, mode)
      let error = try cryptoError { _ = try KeyFile.load(from: path) }
      #expect(error.code == .keyFileMode)
      #expect(error.path == path)
      #expect(error.message.contains(path))
      #expect(error.message.contains("0" + String(mode, radix: 8)))
      #expect(error.message.contains("chmod 600"))
      try setPermissions(path, 0o600)
      #expect(try KeyFile.load(from: path).bytesForTesting == key.bytesForTesting)
      // Owner read only is fine too.
      try setPermissions(path, 0o400)
      #expect(try KeyFile.load(from: path).bytesForTesting == key.bytesForTesting)
    }
  }

  @Test("load follows a symbolic link to a good key file")
  func loadThroughLink() throws {
    try withTemporaryDirectory { dir in
      let key = try KeyFile.generate(at: dir + "/real.key")
      try FileManager.default.createSymbolicLink(atPath: dir + "/link.key", withDestinationPath: dir + "/real.key")
      #expect(try KeyFile.load(from: dir + "/link.key").bytesForTesting == key.bytesForTesting)
    }
  }
}
