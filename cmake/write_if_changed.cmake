# write_if_changed(PATH TEXT): writes TEXT to PATH only when it differs from
# what PATH holds, so that a generated header's dependents do not rebuild
# for nothing. Included by the generators run with cmake -P.
function(write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT "${old}" STREQUAL "${text}")
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
