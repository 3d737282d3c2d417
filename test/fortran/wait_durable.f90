! durable=100ms from Fortran: commits return without waiting for the disk,
! and the program waits for durability through the driver's C function,
! called through an interface (README.md).  Exit 5: the wait failed.
program wait_durable
  use hdf5
  use iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function h5fwait_journal_durable(file) bind(C, name='H5Fwait_journal_durable')
      import :: c_int, hid_t
      integer(hid_t), value :: file
    end function
  end interface
  integer(hid_t) :: file, space, dset
  integer(hsize_t) :: dims(1) = [4096_hsize_t]
  real(8) :: x(4096)
  integer :: err, s
  call h5open_f(err)
  call h5fcreate_f('wait.h5', H5F_ACC_TRUNC_F, file, err)
  call h5screate_simple_f(1, dims, space, err)
  call h5dcreate_f(file, 'x', H5T_NATIVE_DOUBLE, space, dset, err)
  do s = 1, 50
    x = s
    call h5dwrite_f(dset, H5T_NATIVE_DOUBLE, x, dims, err)
    call h5fflush_f(file, H5F_SCOPE_GLOBAL_F, err)
  end do
  if (h5fwait_journal_durable(file) < 0) stop 5
  print '(a)', 'every commit durable'
  call h5dclose_f(dset, err)
  call h5sclose_f(space, err)
  call h5fclose_f(file, err)
  call h5close_f(err)
end program wait_durable
