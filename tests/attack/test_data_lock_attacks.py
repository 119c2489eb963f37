"""The embedded store's one-owner lock (``service/store/owner.py``) attacked: ways a second process could open a data
folder a running service holds, and so append to one journal from two memories."""

from __future__ import annotations

import pytest

from service.store.owner import LOCK, DataInUse, Owner


def test_a_data_folder_reached_through_a_symlink_is_still_held(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    first = Owner(tmp_path / "real")
    try:
        with pytest.raises(DataInUse):
            Owner(tmp_path / "alias")
    finally:
        first.release()


def test_removing_the_lock_file_beside_a_running_owner_lets_no_second_one_in(tmp_path):
    """An operator told "in use by process N" who finds no such process (its pid reused, or read from another host's
    mount) deletes the "stale" lock file, as one does with pid files. The running service's lock was on that file's
    inode: a second process made a new file of the same name, locked it, and both appended to one journal."""
    first = Owner(tmp_path)
    try:
        (tmp_path / LOCK).unlink()
        with pytest.raises(DataInUse):
            Owner(tmp_path).release()
    finally:
        first.release()
    Owner(tmp_path).release()  # once the first lets go, the folder is free again
